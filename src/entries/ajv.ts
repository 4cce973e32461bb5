// A separate entry point of the binary (scripts/build), loaded at first use by src/lib/entries.ts:
// Ajv (with fast-uri) stays out of the main bundle. Its module set-up alone (the draft-07 vocabulary,
// formats and keywords of `new Ajv()`) held 1.4 MB of idle memory (issue 19, fifth pass), for a
// validator only model-input submits need.
export { default } from "ajv";
