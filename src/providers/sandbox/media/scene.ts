import { Rng, type Seed } from "./rng.ts";

/**
 * A seeded "generated landscape": a sky gradient, a sun or moon, a few clouds and three or four
 * layers of ridged hills that fade into mist. The PNG encoder renders it in true colour and the
 * GIF encoder renders it with a palette and animates it, so every sandbox image and video shares
 * one recognisable look that is clearly a placeholder but not noise.
 *
 * Coordinates are fractions of the image height (x as well), so the composition keeps its
 * proportions at any size and a wider image simply shows more of the landscape.
 */

export type Rgb = [number, number, number];

export interface Wave {
  freq: number;
  phase: number;
  amp: number;
  ridged: boolean;
}

export interface HillLayer {
  /** Lowest point of the ridge line, as a fraction of the height (0 = top). */
  base: number;
  /** Ridge height above `base`, as a fraction of the height. */
  amp: number;
  waves: Wave[];
  waveSum: number;
  color: Rgb;
  mist: Rgb;
  /** Parallax speed for animations, in heights per second. */
  speed: number;
}

export interface Ellipse {
  dx: number;
  dy: number;
  rx: number;
  ry: number;
}

export interface Cloud {
  /** Fraction of the width; the rest of the cloud geometry is in heights. */
  x: number;
  y: number;
  parts: Ellipse[];
  light: Rgb;
  shade: Rgb;
  speed: number;
}

export interface Scene {
  skyTop: Rgb;
  skyBottom: Rgb;
  /** x is a fraction of the width; y and r are fractions of the height. */
  sun: { x: number; y: number; r: number; color: Rgb; glow: Rgb };
  clouds: Cloud[];
  layers: HillLayer[];
}

export function clamp01(v: number): number {
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

export function mix(a: Rgb, b: Rgb, t: number): Rgb {
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
}

/** h in degrees, s and l in [0, 1]; returns 0..255 channels. */
export function hsl(h: number, s: number, l: number): Rgb {
  const hh = (((h % 360) + 360) % 360) / 360;
  const q = l < 0.5 ? l * (1 + s) : l + s - l * s;
  const p = 2 * l - q;
  const ch = (t: number): number => {
    let u = t;
    if (u < 0) u += 1;
    if (u > 1) u -= 1;
    if (u < 1 / 6) return p + (q - p) * 6 * u;
    if (u < 1 / 2) return q;
    if (u < 2 / 3) return p + (q - p) * (2 / 3 - u) * 6;
    return p;
  };
  return [ch(hh + 1 / 3) * 255, ch(hh) * 255, ch(hh - 1 / 3) * 255];
}

type Mood = "day" | "dusk" | "dawn" | "night" | "alien";

export function makeScene(seed: Seed): Scene {
  const rng = Rng.from(seed, "scene");
  const mood = rng.pick<Mood>(["day", "dusk", "dawn", "night", "alien", "day", "dusk"]);
  const j = (d: number): number => rng.range(-d, d);
  let skyTop: Rgb;
  let skyBottom: Rgb;
  let sunColor: Rgb;
  let landHue: number;
  switch (mood) {
    case "day":
      skyTop = hsl(212 + j(12), 0.62, 0.42 + j(0.06));
      skyBottom = hsl(195 + j(15), 0.55, 0.82 + j(0.05));
      sunColor = hsl(52, 1, 0.9);
      landHue = 110 + j(50);
      break;
    case "dusk":
      skyTop = hsl(258 + j(20), 0.45, 0.24 + j(0.06));
      skyBottom = hsl(24 + j(14), 0.9, 0.64 + j(0.06));
      sunColor = hsl(44 + j(8), 1, 0.78);
      landHue = 280 + j(40);
      break;
    case "dawn":
      skyTop = hsl(222 + j(15), 0.42, 0.36 + j(0.05));
      skyBottom = hsl(342 + j(12), 0.62, 0.8 + j(0.05));
      sunColor = hsl(38, 1, 0.85);
      landHue = 250 + j(40);
      break;
    case "night":
      skyTop = hsl(228 + j(10), 0.55, 0.07 + j(0.02));
      skyBottom = hsl(222 + j(14), 0.42, 0.3 + j(0.05));
      sunColor = hsl(210, 0.3, 0.9);
      landHue = 225 + j(20);
      break;
    default: {
      const h = rng.range(0, 360);
      skyTop = hsl(h, 0.55, 0.28);
      skyBottom = hsl(h + 50 + j(20), 0.7, 0.74);
      sunColor = hsl(h + 180, 0.9, 0.82);
      landHue = h + 150 + j(40);
    }
  }
  const dark = hsl(landHue, mood === "night" ? 0.3 : 0.38, mood === "night" ? 0.05 : 0.13);

  const layerCount = rng.int(3, 4);
  const layers: HillLayer[] = [];
  for (let i = 0; i < layerCount; i++) {
    const depth = (i + 1) / layerCount; // 0 = far, 1 = near
    const waves: Wave[] = [];
    const waveCount = rng.int(3, 4);
    let freq = rng.range(0.35, 0.8) * (1.1 - 0.4 * depth);
    let waveSum = 0;
    for (let k = 0; k < waveCount; k++) {
      const amp = 1 / (1 + k * rng.range(0.9, 1.6));
      waves.push({ freq, phase: rng.range(0, Math.PI * 2), amp, ridged: rng.next() < 0.6 });
      waveSum += amp;
      freq *= rng.range(1.8, 2.6);
    }
    const color = mix(skyBottom, dark, 0.25 + 0.72 * depth);
    layers.push({
      base: 0.5 + 0.36 * depth + j(0.03),
      amp: rng.range(0.12, 0.26) * (1.15 - 0.3 * depth),
      waves,
      waveSum,
      color,
      mist: mix(color, skyBottom, 0.3 + 0.15 * (1 - depth)),
      speed: 0.01 + 0.07 * depth * depth,
    });
  }

  const clouds: Cloud[] = [];
  const cloudCount = mood === "night" ? rng.int(0, 2) : rng.int(1, 4);
  const cloudLight = mix([255, 255, 255], skyBottom, mood === "day" ? 0.08 : 0.3);
  for (let i = 0; i < cloudCount; i++) {
    const parts: Ellipse[] = [];
    const size = rng.range(0.035, 0.07);
    const n = rng.int(3, 6);
    for (let k = 0; k < n; k++) {
      const ry = size * rng.range(0.6, 1.15);
      parts.push({
        dx: (k - (n - 1) / 2) * size * rng.range(1, 1.5),
        dy: j(size * 0.35),
        rx: ry * rng.range(1.3, 2),
        ry,
      });
    }
    clouds.push({
      x: rng.range(0.05, 0.95),
      y: rng.range(0.08, 0.38),
      parts,
      light: cloudLight,
      shade: mix(cloudLight, skyTop, 0.28),
      speed: rng.range(0.008, 0.025),
    });
  }

  return {
    skyTop,
    skyBottom,
    sun: {
      x: rng.range(0.15, 0.85),
      y: rng.range(0.16, 0.4),
      r: rng.range(0.055, 0.1),
      color: sunColor,
      glow: mix(sunColor, skyBottom, 0.25),
    },
    clouds,
    layers,
  };
}

/** Ridge line of a layer at horizontal position u (in heights): a fraction of the height. */
export function ridgeAt(layer: HillLayer, u: number): number {
  let n = 0;
  for (const w of layer.waves) {
    const s = Math.sin(Math.PI * w.freq * u + w.phase);
    n += w.amp * (w.ridged ? 1 - Math.abs(s) : 0.5 + 0.5 * s);
  }
  return layer.base - layer.amp * (n / layer.waveSum);
}

/** Sky colour at vertical position v (fraction of the height), eased so the horizon glows. */
export function skyAt(scene: Scene, v: number): Rgb {
  const t = clamp01(v / 0.85);
  return mix(scene.skyTop, scene.skyBottom, t * t * (3 - 2 * t));
}
