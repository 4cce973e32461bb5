// A separate entry point of the binary (scripts/build), loaded at first use by src/lib/entries.ts:
// nodemailer stays out of the main bundle, whose every byte costs idle memory.
export { default } from "nodemailer";
