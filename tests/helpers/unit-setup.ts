/**
 * The fast tier's setup: temp directories on a tmpfs when the machine has one (/dev/shm), so the store's fsyncs
 * and the index's writes cost nothing. Every test still makes and removes its own directory.
 */
import { accessSync, constants } from "node:fs";

try {
  accessSync("/dev/shm", constants.W_OK);
  process.env.TMPDIR = "/dev/shm";
} catch {
  // no tmpfs here: the default temp directory
}
