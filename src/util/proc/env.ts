/** A portable environment variable name (what a shell, `export` and the launcher accept). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
