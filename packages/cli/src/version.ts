/** The CLI's version, as `svc --version` and the gateway's `/_svc/version` report it. */
export const CLI_VERSION = '0.1.0';
