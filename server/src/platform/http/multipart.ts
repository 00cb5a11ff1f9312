/**
 * Minimal multipart/form-data reader for small forms (login): text fields only, files ignored.
 * The body is already limited by fastify's bodyLimit before it gets here.
 */
export function parseMultipart(body: Buffer, contentType: string): Record<string, string> {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) throw new Error('multipart boundary missing');
  const delimiter = Buffer.from(`--${boundary}`);
  const fields: Record<string, string> = {};
  let pos = body.indexOf(delimiter);
  if (pos < 0) throw new Error('multipart body malformed');
  while (pos >= 0) {
    const start = pos + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next < 0) throw new Error('multipart body malformed');
    const part = body.subarray(start + 2, next - 2); // skip CRLF after boundary and before next
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd < 0) throw new Error('multipart part malformed');
    const headers = part.subarray(0, headerEnd).toString('utf8');
    const disposition =
      /content-disposition:[^\r\n]*\bname="([^"]*)"(?:[^\r\n]*\bfilename="[^"]*")?/i.exec(headers);
    const isFile = /filename=/i.test(headers);
    if (disposition?.[1] !== undefined && !isFile && !(disposition[1] in fields)) {
      fields[disposition[1]] = part.subarray(headerEnd + 4).toString('utf8');
    }
    pos = next;
  }
  return fields;
}
