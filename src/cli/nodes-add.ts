/** `claude-sessions nodes add NAME user@host …` and `claude-sessions nodes upgrade [NAME] [--wait]`. */
import { SessionError } from "../core/errors.js";
import { addNode } from "../nodes/provision/add.js";
import { upgradeNodes } from "../nodes/provision/upgrade.js";

export const NODES_ADD_HELP = `  claude-sessions nodes add NAME user@host [--ssh-opt KEY=VALUE]… [--replace] [--package FILE [--sha256 HEX]]
                                  check a host, install this claude-sessions there, add it to nodes.json`;

const usage = () =>
  new SessionError(
    "INVALID_ARGUMENT",
    "usage: claude-sessions nodes add NAME user@host [--ssh-opt KEY=VALUE]… [--replace] [--package FILE [--sha256 HEX]]",
    { suggestion: "See docs/nodes.md (Adding a node)." },
  );

export async function runNodesAdd(
  args: string[],
  env: { nodesFile: string | undefined; stateDir: string },
  say: (l: string) => void,
): Promise<number> {
  const pos: string[] = [];
  const sshOpts: string[] = [];
  let replace = false;
  let packageFile: string | undefined;
  let sha256: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const value = () => {
      const v = args[++i];
      if (v === undefined) throw usage();
      return v;
    };
    if (a === "--ssh-opt") sshOpts.push(value());
    else if (a === "--replace") replace = true;
    else if (a === "--package") packageFile = value();
    else if (a === "--sha256") sha256 = value();
    else if (a.startsWith("-")) throw usage();
    else pos.push(a);
  }
  if (pos.length !== 2) throw usage();
  await addNode({
    name: pos[0]!,
    target: pos[1]!,
    sshOpts,
    replace,
    ...(packageFile !== undefined ? { packageFile } : {}),
    ...(sha256 !== undefined ? { sha256 } : {}),
    ...env,
    say,
  });
  return 0;
}

export const NODES_UPGRADE_HELP = `  claude-sessions nodes upgrade [NAME] [--wait]
                                  bring nodes set up by nodes add to this version (idle sessions hibernated)`;

export async function runNodesUpgrade(
  args: string[],
  env: { nodesFile: string | undefined; stateDir: string; version: string },
  say: (l: string) => void,
): Promise<number> {
  const pos = args.filter((a) => !a.startsWith("-"));
  const flags = args.filter((a) => a.startsWith("-"));
  if (pos.length > 1 || flags.some((f) => f !== "--wait"))
    throw new SessionError("INVALID_ARGUMENT", "usage: claude-sessions nodes upgrade [NAME] [--wait]", {
      suggestion: "See docs/nodes.md (Upgrading nodes).",
    });
  await upgradeNodes({ ...(pos[0] !== undefined ? { name: pos[0] } : {}), wait: flags.includes("--wait"), ...env, say });
  return 0;
}
