// A separate entry point of the binary (scripts/build), loaded at first use by src/lib/entries.ts:
// the stripe package stays out of the main bundle, whose every byte costs idle memory.
export { default } from "stripe";
