/** Types of store-setup.mjs (plain ESM, so the faults and the bench use it too). */
import type { SessionRecord } from "../../src/store/schema.js";
import type { Store } from "../../src/store/store.js";
import type { Logger } from "../../src/util/log.js";

export function storeRecord(id: string, over?: Partial<SessionRecord>): SessionRecord;
export function tempStateDir(label: string): { root: string; dir: string };
export const quietLog: Logger;
export function warningLog(): { warnings: string[]; log: Logger };
export function seedCounter(store: Pick<Store, "update">): Promise<void>;
