/** Whether packages/cli/dist was compiled from the sources as they are now (see fresh.mjs). */
export function compiledBuildIsFresh(cliDir: URL): boolean;
