import { hashSeed, Rng, type Seed } from "./rng.ts";

/** Default sample rate: 16 kHz is the usual rate for speech and keeps files small (32 kB/s). */
export const SPEECH_SAMPLE_RATE = 16_000;
export const SPEECH_SAMPLE_RATES = [8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000] as const;
export const MAX_SPEECH_SECONDS = 600;
/** Control-track resolution of the synthesiser, in seconds. */
export const SPEECH_FRAME_SECONDS = 0.005;

export interface SpeechWavOptions {
  /** One of SPEECH_SAMPLE_RATES. Default 16000. */
  sampleRate?: number;
  /**
   * Text to "read": its words, syllables (vowel groups), consonants and punctuation drive the
   * rhythm and vowel colours, looping if the duration outlasts it. Without text the words are
   * random. Either way the result is also a function of the seed.
   */
  text?: string;
}

/** Per-frame (5 ms) control tracks of the formant synthesiser; also used for avatar lip sync. */
export interface SpeechPlan {
  frames: number;
  frameSeconds: number;
  /** Fundamental frequency, Hz. */
  f0: Float32Array;
  /** Voicing amplitude 0..1 (0 in pauses). */
  voice: Float32Array;
  /** Frication/burst noise amplitude 0..1. */
  noise: Float32Array;
  /** Centre frequency of the noise band, Hz. */
  noiseFreq: Float32Array;
  f1: Float32Array;
  f2: Float32Array;
  f3: Float32Array;
}

type Vowel = "a" | "e" | "i" | "o" | "u" | "@";
type Consonant = "none" | "plosive" | "fricative" | "nasal";

interface Syllable {
  onset: Consonant;
  vowel: Vowel;
  coda: Consonant;
  stress: boolean;
}

/** Adult male formant targets (Peterson & Barney style), Hz. */
const VOWELS: Record<Vowel, [number, number, number]> = {
  a: [730, 1090, 2440],
  e: [530, 1840, 2480],
  i: [300, 2250, 3000],
  o: [570, 840, 2410],
  u: [320, 900, 2240],
  "@": [500, 1500, 2500],
};
const VOWEL_LIST: Vowel[] = ["a", "e", "i", "o", "u", "@", "a", "e"];

function checkDuration(durationSeconds: number): void {
  if (!Number.isFinite(durationSeconds) || durationSeconds <= 0 || durationSeconds > MAX_SPEECH_SECONDS) {
    throw new RangeError(`durationSeconds must be > 0 and <= ${MAX_SPEECH_SECONDS}, got ${durationSeconds}`);
  }
}

/** Number of samples for a duration: round(rate x duration), at least 1. */
export function speechSampleCount(durationSeconds: number, sampleRate = SPEECH_SAMPLE_RATE): number {
  return Math.max(1, Math.round(durationSeconds * sampleRate));
}

/**
 * Speech-like 16-bit PCM mono WAV of exactly round(sampleRate x durationSeconds) samples: a
 * glottal-pulse source at a wandering pitch through a parallel formant filter bank, shaped into
 * syllables (about 4-5 per second) with plosive bursts and fricative hiss, grouped into words
 * separated by short gaps and phrases separated by pauses, with falling phrase intonation.
 * Deterministic per (duration, seed, text, sampleRate).
 */
export function encodeSpeechWav(
  durationSeconds: number,
  seed: Seed,
  opts: SpeechWavOptions = {},
): Uint8Array {
  checkDuration(durationSeconds);
  const sr = opts.sampleRate ?? SPEECH_SAMPLE_RATE;
  if (!(SPEECH_SAMPLE_RATES as readonly number[]).includes(sr)) {
    throw new RangeError(`sampleRate must be one of ${SPEECH_SAMPLE_RATES.join(", ")}, got ${sr}`);
  }
  const n = speechSampleCount(durationSeconds, sr);
  const plan = planSpeech(durationSeconds, seed, opts.text);
  const synthSeed = hashSeed(seed, "synth", opts.text ?? "");

  // Pass 1 finds the peak, pass 2 (identical, deterministic) writes scaled samples: exact
  // normalisation without holding a float copy of a possibly 10-minute signal.
  let peak = 0;
  synthesize(plan, sr, n, synthSeed, (block, len) => {
    for (let i = 0; i < len; i++) {
      const a = Math.abs(block[i]!);
      if (a > peak) peak = a;
    }
  });
  const gain = peak > 0 ? (0.85 * 32767) / peak : 0;

  const dataBytes = n * 2;
  const out = new Uint8Array(44 + dataBytes);
  const dv = new DataView(out.buffer);
  writeAscii(out, 0, "RIFF");
  dv.setUint32(4, 36 + dataBytes, true);
  writeAscii(out, 8, "WAVE");
  writeAscii(out, 12, "fmt ");
  dv.setUint32(16, 16, true); // fmt chunk size
  dv.setUint16(20, 1, true); // PCM
  dv.setUint16(22, 1, true); // mono
  dv.setUint32(24, sr, true);
  dv.setUint32(28, sr * 2, true); // byte rate
  dv.setUint16(32, 2, true); // block align
  dv.setUint16(34, 16, true); // bits per sample
  writeAscii(out, 36, "data");
  dv.setUint32(40, dataBytes, true);

  // Samples go through an Int16Array view when the host is little-endian (every platform Bun
  // ships for), else through DataView.
  const pcm = LITTLE_ENDIAN ? new Int16Array(out.buffer, 44, n) : null;
  const fade = Math.max(1, Math.round(sr * 0.01));
  let pos = 0;
  synthesize(plan, sr, n, synthSeed, (block, len) => {
    for (let i = 0; i < len; i++, pos++) {
      let v = block[i]! * gain;
      if (pos < fade) v *= pos / fade;
      const tail = n - 1 - pos;
      if (tail < fade) v *= tail / fade;
      const s = Math.round(v);
      const c = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
      if (pcm) pcm[pos] = c;
      else dv.setInt16(44 + pos * 2, c, true);
    }
  });
  return out;
}

const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

function writeAscii(out: Uint8Array, o: number, s: string): void {
  for (let i = 0; i < s.length; i++) out[o + i] = s.charCodeAt(i);
}

type Unit = Syllable[] | "," | "." | "?";

/** Splits text into words of syllables; punctuation becomes a phrase or comma break. */
function textUnits(text: string): Unit[] {
  const units: Unit[] = [];
  const tokens = text.toLowerCase().match(/[\p{L}\p{N}']+|[.!?;:,]/gu) ?? [];
  for (const tok of tokens) {
    if (tok === ",") {
      units.push(",");
      continue;
    }
    if (/^[.!?;:]$/.test(tok)) {
      units.push(tok === "?" ? "?" : ".");
      continue;
    }
    const syllables: Syllable[] = [];
    if (/^[a-z']+$/.test(tok)) {
      const re = /([^aeiouy]*)([aeiouy]+)/g;
      let m: RegExpExecArray | null = re.exec(tok);
      let last = 0;
      while (m) {
        const v = m[2]!.charAt(0);
        syllables.push({
          onset: consonantClass(m[1]!),
          vowel: v === "a" ? "a" : v === "e" ? "e" : v === "i" || v === "y" ? "i" : v === "o" ? "o" : "u",
          coda: "none",
          stress: false,
        });
        last = re.lastIndex;
        m = re.exec(tok);
      }
      if (syllables.length === 0)
        syllables.push({ onset: consonantClass(tok), vowel: "@", coda: "none", stress: false });
      const lastSyl = syllables[syllables.length - 1]!;
      lastSyl.coda = consonantClass(tok.slice(last));
    } else {
      // Other scripts and digits: one syllable per character, vowel from the code point.
      for (const ch of tok.slice(0, 6)) {
        const cp = ch.codePointAt(0) ?? 0;
        syllables.push({
          onset: (["none", "plosive", "fricative", "nasal"] as const)[cp % 4]!,
          vowel: VOWEL_LIST[(cp >> 2) % VOWEL_LIST.length]!,
          coda: "none",
          stress: false,
        });
      }
    }
    syllables[0]!.stress = true;
    units.push(syllables.slice(0, 5));
  }
  return units;
}

function consonantClass(letters: string): Consonant {
  const c = letters.slice(-1);
  if (c === "") return "none";
  if ("szfvhxcjq".includes(c)) return "fricative";
  if ("ptkbdg".includes(c)) return "plosive";
  if ("mnlrw".includes(c)) return "nasal";
  return "none";
}

function randomWord(rng: Rng): Syllable[] {
  const count = rng.pick([1, 1, 1, 2, 2, 2, 3, 3, 4]);
  const stressAt = rng.int(0, count - 1);
  const syl: Syllable[] = [];
  for (let i = 0; i < count; i++) {
    syl.push({
      onset: rng.pick<Consonant>(["plosive", "plosive", "fricative", "nasal", "nasal", "none"]),
      vowel: rng.pick(VOWEL_LIST),
      coda:
        i === count - 1
          ? rng.pick<Consonant>(["none", "none", "none", "fricative", "plosive", "nasal"])
          : "none",
      stress: i === stressAt,
    });
  }
  return syl;
}

/** Builds the 5 ms control tracks for a duration: the "score" that the synthesiser plays. */
export function planSpeech(durationSeconds: number, seed: Seed, text?: string): SpeechPlan {
  checkDuration(durationSeconds);
  const rng = Rng.from(seed, "speech", text ?? "");
  const fs = SPEECH_FRAME_SECONDS;
  const frames = Math.ceil(durationSeconds / fs) + 2;
  const f0 = new Float32Array(frames);
  const voice = new Float32Array(frames);
  const noise = new Float32Array(frames);
  const noiseFreq = new Float32Array(frames).fill(4500);
  const f1 = new Float32Array(frames);
  const f2 = new Float32Array(frames);
  const f3 = new Float32Array(frames);

  const female = rng.next() < 0.5;
  const baseF0 = female ? rng.range(175, 230) : rng.range(95, 135);
  const formantScale = female ? rng.range(1.12, 1.2) : rng.range(0.96, 1.04);
  const rate = rng.range(0.85, 1.15); // speaking-rate factor
  const units = text ? textUnits(text) : [];
  if (!units.some((u) => Array.isArray(u))) units.length = 0; // nothing speakable: random words

  // Targets, written as spans of frames; formants hold their last target through pauses.
  const tf1 = new Float32Array(frames);
  const tf2 = new Float32Array(frames);
  const tf3 = new Float32Array(frames);
  let cur: [number, number, number] = VOWELS["@"];
  const span = (a: number, b: number, fn: (i: number, u: number) => void): void => {
    const i0 = Math.max(0, Math.round(a / fs));
    const i1 = Math.min(frames, Math.round(b / fs));
    for (let i = i0; i < i1; i++) fn(i, (i - i0) / Math.max(1, i1 - i0));
  };
  const setFormants = (a: number, b: number, f: [number, number, number]): void => {
    cur = f;
    span(a, b, (i) => {
      tf1[i] = f[0] * formantScale;
      tf2[i] = f[1] * formantScale;
      tf3[i] = f[2] * formantScale;
    });
  };

  let t = rng.range(0.12, 0.3);
  setFormants(0, t, cur);
  let unitIndex = 0;
  const nextUnit = (): Unit => {
    if (units.length === 0) return randomWord(rng);
    const u = units[unitIndex]!;
    unitIndex = (unitIndex + 1) % units.length;
    return u;
  };

  while (t < durationSeconds) {
    // Gather a phrase: words up to a full stop (text, which loops) or 3..8 random words.
    const words: (Syllable[] | ",")[] = [];
    const target = rng.int(3, 8);
    let question = false;
    for (let guard = 0; guard < 64; guard++) {
      const u = nextUnit();
      if (u === "." || u === "?") {
        if (words.length === 0) continue;
        question = u === "?";
        break;
      }
      words.push(u);
      if (units.length === 0 ? words.length >= target : unitIndex === 0) break;
    }
    let syllableTotal = 0;
    for (const w of words) if (w !== ",") syllableTotal += w.length;
    let sIndex = 0;
    const phraseF0Start = baseF0 * rng.range(1.08, 1.2);
    const phraseF0End = baseF0 * rng.range(0.8, 0.9);

    for (const w of words) {
      if (w === ",") {
        t += rng.range(0.15, 0.28) / rate;
        continue;
      }
      for (let si = 0; si < w.length && t < durationSeconds; si++) {
        const s = w[si]!;
        const pos = syllableTotal > 1 ? sIndex / (syllableTotal - 1) : 0;
        sIndex++;
        const lastOfPhrase = sIndex === syllableTotal;
        const pitch = phraseF0Start + (phraseF0End - phraseF0Start) * pos;
        const vowelF = VOWELS[s.vowel];
        // Onset consonant.
        if (s.onset === "plosive") {
          const closure = rng.range(0.03, 0.05) / rate;
          const burst = rng.range(0.01, 0.018);
          const bf = rng.range(1400, 3600);
          span(t + closure, t + closure + burst, (i, u) => {
            noise[i] = 0.32 * (1 - u * 0.6);
            noiseFreq[i] = bf;
          });
          setFormants(t, t + closure + burst, cur);
          t += closure + burst;
        } else if (s.onset === "fricative") {
          const d = rng.range(0.06, 0.11) / rate;
          const nf = rng.range(3800, 6500);
          const voiced = rng.next() < 0.35;
          span(t, t + d, (i, u) => {
            noise[i] = 0.3 * Math.sin(Math.PI * Math.min(1, u * 1.3 + 0.15));
            noiseFreq[i] = nf;
            if (voiced) voice[i] = 0.15;
            f0[i] = pitch;
          });
          setFormants(t, t + d, cur);
          t += d;
        } else if (s.onset === "nasal") {
          const d = rng.range(0.045, 0.075) / rate;
          span(t, t + d, (i) => {
            voice[i] = 0.35;
            f0[i] = pitch;
          });
          setFormants(t, t + d, [260, 1150, 2300]);
          t += d;
        }
        // Vowel nucleus with an accent hump on stressed syllables.
        const vd = (rng.range(0.1, 0.17) * (s.stress ? 1.35 : 1) * (lastOfPhrase ? 1.3 : 1)) / rate;
        const amp = (s.stress ? 1 : 0.72) * rng.range(0.85, 1);
        const accent = s.stress ? rng.range(0.06, 0.16) : 0;
        const rise = question && lastOfPhrase ? 0.35 : 0;
        span(t, t + vd, (i, u) => {
          const attack = Math.min(1, u / 0.15);
          const release = u > 0.6 ? 1 - ((u - 0.6) / 0.4) * 0.75 : 1;
          voice[i] = amp * attack * release;
          f0[i] =
            pitch * (1 + accent * Math.sin(Math.PI * u) + rise * u * u) * (1 + 0.01 * Math.sin(i * 0.9));
        });
        setFormants(t, t + vd, vowelF);
        t += vd;
        // Coda consonant.
        if (s.coda === "fricative") {
          const d = rng.range(0.05, 0.09) / rate;
          const nf = rng.range(4200, 6500);
          span(t, t + d, (i, u) => {
            noise[i] = 0.25 * (1 - u);
            noiseFreq[i] = nf;
          });
          t += d;
        } else if (s.coda === "plosive") {
          const closure = rng.range(0.03, 0.05) / rate;
          const bf = rng.range(1500, 3500);
          span(t + closure, t + closure + 0.012, (i) => {
            noise[i] = 0.22;
            noiseFreq[i] = bf;
          });
          t += closure + 0.012;
        } else if (s.coda === "nasal") {
          const d = rng.range(0.04, 0.07) / rate;
          span(t, t + d, (i, u) => {
            voice[i] = 0.3 * (1 - u);
            f0[i] = pitch * 0.97;
          });
          setFormants(t, t + d, [260, 1150, 2300]);
          t += d;
        }
      }
      // Gap between words.
      t += rng.range(0.035, 0.11) / rate;
    }
    // Pause between phrases.
    t += rng.range(0.3, 0.75);
  }

  // Formants glide between targets (one-pole, ~12 ms); voicing is lightly smoothed; the pitch
  // of silent frames is carried from the last voiced one so the oscillator never jumps.
  let a1 = tf1[0] || VOWELS["@"][0];
  let a2 = tf2[0] || VOWELS["@"][1];
  let a3 = tf3[0] || VOWELS["@"][2];
  let v = 0;
  let lastF0 = baseF0;
  for (let i = 0; i < frames; i++) {
    if (tf1[i]! > 0) {
      a1 += (tf1[i]! - a1) * 0.35;
      a2 += (tf2[i]! - a2) * 0.35;
      a3 += (tf3[i]! - a3) * 0.35;
    }
    f1[i] = a1;
    f2[i] = a2;
    f3[i] = a3;
    v += (voice[i]! - v) * 0.6;
    voice[i] = v;
    if (f0[i]! > 0) lastF0 = f0[i]!;
    else f0[i] = lastF0;
  }
  return { frames, frameSeconds: fs, f0, voice, noise, noiseFreq, f1, f2, f3 };
}

/** Band-pass biquad (RBJ, constant 0 dB peak gain), transposed direct form II. */
class BandPass {
  private b0 = 0;
  private a1 = 0;
  private a2 = 0;
  private z1 = 0;
  private z2 = 0;

  set(freq: number, bw: number, sr: number): void {
    const f = Math.min(freq, sr * 0.45);
    const w0 = (2 * Math.PI * f) / sr;
    const q = Math.max(0.5, f / bw);
    const alpha = Math.sin(w0) / (2 * q);
    const a0 = 1 + alpha;
    this.b0 = alpha / a0;
    this.a1 = (-2 * Math.cos(w0)) / a0;
    this.a2 = (1 - alpha) / a0;
  }

  run(x: number): number {
    // b1 = 0, b2 = -b0
    const y = this.b0 * x + this.z1;
    this.z1 = -this.a1 * y + this.z2;
    this.z2 = -this.b0 * x - this.a2 * y;
    return y;
  }
}

const BLOCK = 4096;

function synthesize(
  plan: SpeechPlan,
  sr: number,
  n: number,
  seed: number,
  sink: (block: Float32Array, len: number) => void,
): void {
  const rng = new Rng(seed);
  const block = new Float32Array(BLOCK);
  const r1 = new BandPass();
  const r2 = new BandPass();
  const r3 = new BandPass();
  const r4 = new BandPass();
  const rn = new BandPass();
  const hasF4 = sr * 0.45 > 3600;
  const samplesPerFrame = sr * plan.frameSeconds;
  const Tp = 0.42;
  const Tn = 0.16;
  let phase = 0;
  let prevFlow = 0;
  let jitter = 1;
  let frame = -1;
  let dc = 0;
  let fill = 0;
  for (let s = 0; s < n; s++) {
    const fpos = s / samplesPerFrame;
    const i = Math.min(plan.frames - 2, Math.floor(fpos));
    const u = fpos - i;
    if (i !== frame) {
      frame = i;
      r1.set(plan.f1[i]!, 80, sr);
      r2.set(plan.f2[i]!, 100, sr);
      r3.set(plan.f3[i]!, 150, sr);
      if (hasF4) r4.set(3500, 250, sr);
      const nf = plan.noiseFreq[i]!;
      rn.set(nf, nf * 0.6, sr);
    }
    const av = plan.voice[i]! + (plan.voice[i + 1]! - plan.voice[i]!) * u;
    const an = plan.noise[i]! + (plan.noise[i + 1]! - plan.noise[i]!) * u;
    const f0 = (plan.f0[i]! + (plan.f0[i + 1]! - plan.f0[i]!) * u) * jitter;

    phase += f0 / sr;
    if (phase >= 1) {
      phase -= 1;
      jitter = 1 + (rng.next() - 0.5) * 0.02;
    }
    const flow =
      phase < Tp
        ? 0.5 * (1 - Math.cos((Math.PI * phase) / Tp))
        : phase < Tp + Tn
          ? Math.cos((Math.PI * (phase - Tp)) / (2 * Tn))
          : 0;
    const white = rng.next() * 2 - 1;
    const src = ((flow - prevFlow) * sr) / (f0 * 8) + white * 0.04 * flow;
    prevFlow = flow;

    let x = 0;
    if (av > 1e-4) {
      x = r1.run(src) + 0.6 * r2.run(src) + 0.3 * r3.run(src);
      if (hasF4) x += 0.12 * r4.run(src);
      x *= av;
    } else {
      // Keep the filters ringing down naturally instead of freezing their state.
      r1.run(0);
      r2.run(0);
      r3.run(0);
      if (hasF4) r4.run(0);
    }
    const nz = rn.run(white);
    x += an * nz * 1.4;
    // DC blocker.
    dc += (x - dc) * 0.005;
    block[fill++] = x - dc;
    if (fill === BLOCK) {
      sink(block, fill);
      fill = 0;
    }
  }
  if (fill > 0) sink(block, fill);
}
