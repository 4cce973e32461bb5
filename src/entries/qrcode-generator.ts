// A separate entry point of the binary (scripts/build), loaded at first use by src/lib/entries.ts:
// the QR code generator is needed only by the console's two-factor set-up page.
export { default } from "qrcode-generator";
