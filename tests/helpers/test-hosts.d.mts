/** Types of test-hosts.mjs (plain ESM, so the bench uses it too). */
export interface TestHost {
  name: string;
  /** The host's address (inside its namespace) and the coordinator's end of the link. */
  address: string;
  gateway: string;
  user: string;
  home: string;
  /** The node's state directory and tmux socket name. */
  stateDir: string;
  socket: string;
  /** The coordinator's end of the veth pair (what a link cut takes down). */
  veth: string;
  /** nodes.json entry: ssh to the host running this package's built server. */
  exec: string[];
  attach: string[];
  /** A directory of the node user's, for session cwds. */
  work: string;
  cut(): void;
  /** Variables every later ssh session of the host gets (~/.ssh/environment, 0600): secrets stay out of argv. */
  setUserEnv(vars: Record<string, string>): void;
  /** Gives everything under the user's HOME back to the user (after root prepared files there). */
  chownHome(): void;
  restore(): void;
  /** Runs a command on the host as its user (through ssh), for checks. */
  ssh(args: string[]): string;
}

export interface TestHosts {
  hosts: TestHost[];
  destroy(): void;
}

export function testHostsMissing(): string | undefined;
export function testHostsOrSkip(): boolean;
export function makeTestHosts(count: number, opts?: { tag?: string; env?: Record<string, string>; root?: string }): TestHosts;
export function writeNodesFile(
  dir: string,
  nodes: Record<string, { exec: string[]; attach?: string[] } | { url: string; token_file: string; attach?: string[] }>,
): string;
export function loopbackExec(env: Record<string, string>): string[];
