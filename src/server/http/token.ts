/**
 * The HTTP server's bearer token: CLAUDE_SESSIONS_TOKEN, or 256 random bits kept in `<state>/token` (0600,
 * created exclusively on first start, refused when another user owns it or others may read it).
 * The token itself is never logged, stored in state.json or put on a command line.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { constants } from "node:fs";
import { lstat, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { SessionError } from "../../core/errors.js";

export interface Token {
  value: string;
  /** Where it is kept (undefined when it came from the environment). */
  path?: string;
}

const MIN_LENGTH = 16;

/** `fromEnv`: the operator's CLAUDE_SESSIONS_TOKEN (config.ts operatorToken), else one kept in <state>/token. */
export async function loadToken(stateDir: string, fromEnv: string | undefined): Promise<Token> {
  if (fromEnv !== undefined && fromEnv !== "") {
    if (fromEnv.length < MIN_LENGTH || /[^\x21-\x7e]/.test(fromEnv)) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `CLAUDE_SESSIONS_TOKEN must be at least ${MIN_LENGTH} printable characters without spaces.`,
        {
          suggestion: "Unset it to have the server generate one into <state>/token.",
        },
      );
    }
    return { value: fromEnv };
  }
  const path = join(stateDir, "token");
  try {
    const fh = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    const value = randomBytes(32).toString("base64url");
    try {
      await fh.writeFile(value + "\n");
    } finally {
      await fh.close();
    }
    return { value, path };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  const st = await lstat(path);
  const uid = process.getuid?.();
  if (!st.isFile() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) {
    throw new SessionError(
      "PERMISSION_DENIED",
      `the token file ${path} cannot be trusted (not a regular file of this user with mode 0600).`,
      {
        suggestion: `Remove it; the server writes a new one: rm ${JSON.stringify(path)}.`,
      },
    );
  }
  const value = (await readFile(path, "utf8")).trim();
  if (value.length < MIN_LENGTH)
    throw new SessionError("PERMISSION_DENIED", `the token file ${path} is too short.`, {
      suggestion: `Remove it; the server writes a new one.`,
    });
  return { value, path };
}

/** Constant-time comparison (of digests, so the lengths do not leak either). */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
