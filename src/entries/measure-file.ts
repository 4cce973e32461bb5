// A worker script (src/lib/threads.ts): measures a large delivered file (src/providers/measure.ts,
// measureFileAsync) in a thread of its own, so its reads never hold the event loop.
import { answerInThread } from "../lib/threads.ts";
import { type Measured, measureFile } from "../providers/measure.ts";

answerInThread<string, Measured>((path) => ({ result: measureFile(path), transfer: [] }));
