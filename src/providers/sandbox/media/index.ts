/** Real media for the sandbox provider, written in-process with no dependency. */
export { type Animation, encodeAnimation } from "./gif.ts";
export { encodePng, readPngSize } from "./png.ts";
export { encodeSpeechWav } from "./wav.ts";
