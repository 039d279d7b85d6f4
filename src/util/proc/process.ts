/** Signals to processes this server started (by pid or process group), never by name. */

/** Signals a process group (a session's leader pid is its group id); falls back to the pid alone. */
export function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      /* already gone */
    }
  }
}

/** The process exists (a zombie still counts until its parent reaps it). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Ends a process group this server's family started (SIGTERM, then SIGKILL after `graceMs`) when no backend holds
 * its terminal here: a pty session owned by another server process. Resolves whether it is gone.
 */
export async function terminate(pid: number, graceMs: number): Promise<{ gone: boolean; forced: boolean }> {
  const waitGone = async (ms: number) => {
    for (const end = Date.now() + ms; isAlive(pid) && Date.now() < end;) await new Promise((r) => setTimeout(r, 25));
    return !isAlive(pid);
  };
  if (graceMs > 0) {
    signalGroup(pid, "SIGTERM");
    if (await waitGone(graceMs)) return { gone: true, forced: false };
  }
  signalGroup(pid, "SIGKILL");
  return { gone: await waitGone(2000), forced: true };
}
