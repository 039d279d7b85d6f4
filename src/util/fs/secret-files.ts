/**
 * File names that hold secrets by convention. sync_context never mentions such a file (a mention makes Claude read
 * it and send it to the API), whether named by the caller or found by git, judged on the name given AND on the file
 * it resolves to (a link named notes.txt that points at .env is .env).
 *
 * A file is secret when its base name (case-insensitive) is one of: .env, .env.*, *.env, .envrc, secret*,
 * credentials*, .netrc / _netrc, .npmrc, .pypirc, .pgpass, .git-credentials, .htpasswd, .dockercfg, id_rsa* /
 * id_dsa* / id_ecdsa* / id_ed25519*, *.pem, *.key, *.p12, *.pfx, *.jks, *.keystore, *.kdbx, *.tfvars, *.tfstate;
 * or when a directory on its path is .ssh, .gnupg, .aws or .docker.
 */
import { sep } from "node:path";

const NAMES = [
  /^\.env$/,
  /^\.env\..*/,
  /.\.env$/,
  /^\.envrc$/,
  /^secret/,
  /^credentials/,
  /^[._]netrc$/,
  /^\.npmrc$/,
  /^\.pypirc$/,
  /^\.pgpass$/,
  /^\.git-credentials$/,
  /^\.htpasswd$/,
  /^\.dockercfg$/,
  /^id_(rsa|dsa|ecdsa|ed25519)/,
  /\.(pem|key|p12|pfx|jks|keystore|kdbx|tfvars|tfstate)$/,
];
const DIRS = new Set([".ssh", ".gnupg", ".aws", ".docker"]);

/** Whether `path` (relative or absolute) names a file that holds secrets by convention. */
export function isSecretPath(path: string): boolean {
  const parts = path
    .split(sep)
    .filter(Boolean)
    .map((p) => p.toLowerCase());
  const base = parts.at(-1) ?? "";
  if (NAMES.some((re) => re.test(base))) return true;
  return parts.slice(0, -1).some((d) => DIRS.has(d));
}
