// The SAML schema validator's worker thread (started by saml-schema.ts, plain JavaScript since a
// worker thread loads its file without the TypeScript loader): xmllint compiled to WebAssembly
// checks a message against the SAML 2.0 protocol schema, which imports the assertion, XML
// signature and XML encryption schemas.
//
// The WebAssembly module is compiled and the schemas read once, when the thread starts; each
// message then gets a fresh xmllint instance (its own memory and in-memory files), so nothing of
// one message is left for the next. The thread answers each message once with xmllint's exit code
// (0: valid) and what it printed, or with `failed` when xmllint aborted.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parentPort } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const validatorEntry = require.resolve('@authenio/samlify-xmllint-wasm');
const xmllintDir = dirname(createRequire(validatorEntry).resolve('xmllint-wasm'));
const schemaDir = join(dirname(validatorEntry), 'schemas');

/** The schema checked against first; the others are the files it imports. */
const SCHEMA = 'saml-schema-protocol-2.0.xsd';
const schemas = [
  SCHEMA,
  'datatypes.dtd',
  'saml-schema-assertion-2.0.xsd',
  'xmldsig-core-schema.xsd',
  'XMLSchema.dtd',
  'xenc-schema.xsd',
].map((fileName) => ({ fileName, contents: readFileSync(join(schemaDir, fileName), 'utf8') }));

const compiled = new WebAssembly.Module(readFileSync(join(xmllintDir, 'xmllint.wasm')));
// The library's script exports the instance factory and, on load, listens for its own one-shot
// messages on the parent port: that listener goes, the thread answers ours.
const createXmllint = require(join(xmllintDir, 'xmllint-node.js'));
parentPort.removeAllListeners('message');

/** 16 MiB to start, at most 32 MiB (xmllint-wasm's own defaults), in 64 KiB pages. */
const MEMORY = { initial: 256, maximum: 512 };

/** @param {{ id: number, xml: string }} job */
function check(job) {
  const stderr = [];
  let answered = false;
  const answer = (message) => {
    if (answered) return;
    answered = true;
    parentPort.postMessage({ id: job.id, ...message });
  };
  createXmllint({
    inputFiles: [{ fileName: 'content.xml', contents: job.xml }, ...schemas],
    arguments: ['--schema', SCHEMA, '--noout', 'content.xml'],
    stdout: () => undefined,
    stderr: (byte) => stderr.push(byte),
    wasmMemory: new WebAssembly.Memory(MEMORY),
    instantiateWasm: (imports, done) => {
      WebAssembly.instantiate(compiled, imports).then(
        (instance) => done(instance, compiled),
        (error) => answer({ failed: String(error) }),
      );
      return {};
    },
    onExit: (exitCode) =>
      answer({ exitCode, output: new TextDecoder().decode(Uint8Array.from(stderr)) }),
    onAbort: (reason) => answer({ failed: String(reason) }),
    // xmllint's exit unwinds its stack by this throw; the thread's own exit code is left alone
    quit: (_status, unwind) => {
      throw unwind;
    },
  }).catch((error) => answer({ failed: String(error) }));
}

parentPort.on('message', check);
