/** Where `npm run build:cli` builds `svc` (what the local driver's machines run). */
export declare const CLI_BUILD_DIR: string;
/** Whether dist/svc.mjs exists and no source is newer. */
export declare function isCliBuildFresh(): Promise<boolean>;
/**
 * The path of dist/svc.mjs, built first (under a lock shared by every process) when it is
 * missing or older than the sources; `onBuild` hears once that a build starts.
 */
export declare function ensureCliBuild(options?: { onBuild?: () => void }): Promise<string>;
