// Imported first by the entry point, before anything loads Elysia: Elysia reads NODE_ENV once, when
// its error module loads, and outside "production" every validation error copies the whole request
// body, pretty-printed, into its message (a 4 MB body nested 62 deep became 536 MB and 4.8 s of the
// only thread). gengate renders its own error bodies, so it always runs Elysia in production mode,
// whatever NODE_ENV the environment (or a test runner) sets. See docs/decisions.md.
process.env.NODE_ENV = "production";
