#!/usr/bin/env node
// After tsc: writes dist/server/tools-listing.json, the tools/list of the default toolsets ("all"), so a server's
// first tools/list does not convert every zod schema again (src/server/listing/cache.ts says when it is used).
import { writeFileSync } from "node:fs";
const { listTools } = await import("../dist/server/server.js");
const { LISTING_FILE, listingFingerprint } = await import("../dist/server/listing/cache.js");
writeFileSync(LISTING_FILE, JSON.stringify({ fingerprint: listingFingerprint(), listings: { all: listTools() } }));
