/** The portal version this process runs: the `version` of the project's package.json. */
import pkg from '../../../../package.json' with { type: 'json' };

export const portalVersion: string = pkg.version;
