/**
 * The environment a node's exec command (ssh, kubectl, docker) runs with: only what such a command needs to find
 * its programs, its user, its keys and its cluster — never this server's secrets (DOPPLER_TOKEN, the HTTP bearer
 * token, ANTHROPIC_API_KEY, …), which the command, and through ssh's SendEnv the node, would otherwise receive.
 * A node's own settings belong in its command line or its profile (docs/nodes.md).
 */
export const NODE_EXEC_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TMPDIR",
  "XDG_RUNTIME_DIR",
  "SSH_AUTH_SOCK",
  "KUBECONFIG",
  "DOCKER_HOST",
  "DOCKER_CONFIG",
  "DOCKER_CONTEXT",
] as const;

/** `env` filtered to NODE_EXEC_ENV and the locale's LC_* variables. */
export function nodeExecEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const keep = new Set<string>(NODE_EXEC_ENV);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && (keep.has(k) || /^LC_[A-Z]+$/.test(k))) out[k] = v;
  return out;
}
