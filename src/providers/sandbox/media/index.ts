/**
 * In-process media encoders for the sandbox provider: real, valid files from pure TypeScript
 * (plus the runtime's zlib), no external tools, no network, deterministic per seed.
 */
export { encodePng, MAX_PNG_PIXELS, MAX_PNG_SIDE, type PngOptions } from "./png.ts";
export type { Seed } from "./rng.ts";
export {
  type EncodedVideo,
  encodeVideo,
  frameTimes,
  MAX_VIDEO_REQUEST_SIDE,
  MAX_VIDEO_SECONDS,
  VIDEO_MAX_FPS,
  VIDEO_MAX_PIXELS,
  VIDEO_MAX_SIDE,
  type VideoOptions,
  type VideoStyle,
  videoSize,
} from "./video.ts";
export {
  encodeSpeechWav,
  MAX_SPEECH_SECONDS,
  planSpeech,
  SPEECH_SAMPLE_RATE,
  SPEECH_SAMPLE_RATES,
  type SpeechPlan,
  type SpeechWavOptions,
  speechSampleCount,
} from "./wav.ts";
