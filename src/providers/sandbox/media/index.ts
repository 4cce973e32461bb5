/**
 * In-process media encoders for the sandbox provider: real, valid files from pure TypeScript
 * (plus the runtime's zlib), no external tools, no network, deterministic per seed.
 */
export {
  ANIMATION_MAX_FPS,
  ANIMATION_MAX_PIXELS,
  ANIMATION_MAX_SIDE,
  type AnimationOptions,
  type AnimationStyle,
  animationSize,
  type EncodedAnimation,
  /** Former name of EncodedAnimation, kept for existing imports. */
  type EncodedAnimation as Animation,
  encodeAnimation,
  frameDelays,
  MAX_ANIMATION_REQUEST_SIDE,
  MAX_ANIMATION_SECONDS,
} from "./animation.ts";
export { lzwEncode } from "./gif.ts";
export { encodePng, MAX_PNG_PIXELS, MAX_PNG_SIDE, type PngOptions } from "./png.ts";
export type { Seed } from "./rng.ts";
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
