import type { Kind, Unit } from "./model.ts";

/**
 * Default JSON Schemas of model inputs, derived from a model's kind, unit and limits.
 * An operator may replace them per model with `input_schema` in the config.
 * URL-valued fields accept an http(s) URL or a gengate file id ("file_...").
 */
const url = (description: string) => ({ type: "string", minLength: 1, maxLength: 4096, description });
const prompt = { type: "string", minLength: 1, maxLength: 8000, description: "What to generate." };
const seed = { type: "integer", minimum: 0, maximum: 4294967295, description: "Random seed." };
const size = (what: string) => ({ type: "integer", minimum: 64, maximum: 8192, description: what });

/** The sandbox controls (docs/api.md "Sandbox models"), accepted by sandbox models only. */
export const SANDBOX_CONTROLS = {
  type: "object",
  additionalProperties: false,
  description: "Sandbox test controls: slow the job down, make it fail, or finish with fewer units.",
  properties: {
    delay_ms: { type: "integer", minimum: 0, maximum: 600000 },
    fail: { type: "boolean" },
    actual_units: { type: "integer", minimum: 0 },
  },
};

/**
 * The file formats the sandbox produces, by kind: it encodes PNG images and WAV audio only, so
 * other formats (jpeg, webp, mp3) are refused naming these rather than delivered as something else.
 * `url` is fal's delivery mode for speech (the AI SDK's fal provider always sends
 * `output_format: "url"`): a link to the file, which is how gengate delivers every output.
 */
const SANDBOX_OUTPUT_FORMATS: Partial<Record<Kind, Record<string, unknown>>> = {
  image: { type: "string", enum: ["png"], description: "The image file format: png." },
  audio: {
    type: "string",
    enum: ["wav", "url"],
    description: "The audio file format: wav (url, fal's delivery mode, also gives a link to the WAV file).",
  },
};

export interface SchemaInput {
  kind: Kind;
  unit: Unit;
  max: number | null;
  resolutions: string[] | null;
  referenceVideo: boolean;
  sandbox: boolean;
}

export function defaultInputSchema(m: SchemaInput): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const duration = {
    type: "integer",
    minimum: 1,
    ...(m.max ? { maximum: m.max } : {}),
    description: "Length in seconds; omitted means the model's default_units.",
  };

  switch (m.kind) {
    case "video":
      Object.assign(properties, {
        prompt,
        duration,
        image_url: url("Optional first frame (image-to-video)."),
        aspect_ratio: { type: "string", enum: ["16:9", "9:16", "1:1"] },
        seed,
      });
      required.push("prompt");
      if (m.referenceVideo) {
        properties.video_url = url("Reference video.");
        properties.input_duration_sec = {
          type: "integer",
          minimum: 1,
          ...(m.max ? { maximum: m.max } : {}),
          description: "Length of the reference video in seconds; the price is computed from it.",
        };
      }
      break;
    case "image":
      Object.assign(properties, {
        prompt,
        num_images: {
          type: "integer",
          minimum: 1,
          ...(m.unit === "image" && m.max ? { maximum: m.max } : { maximum: 16 }),
          description: "Images to generate; omitted means the model's default_units.",
        },
        width: size("Width in pixels."),
        height: size("Height in pixels."),
        image_url: url("Optional source image (image-to-image)."),
        seed,
      });
      required.push("prompt");
      break;
    case "avatar":
      Object.assign(properties, {
        image_url: url("Portrait to animate."),
        audio_url: url("Speech to lip-sync; or give text."),
        text: { type: "string", minLength: 1, maxLength: 8000 },
        duration,
      });
      required.push("image_url");
      break;
    case "upscale":
      if (m.unit === "second") {
        Object.assign(properties, { video_url: url("Video to upscale."), duration });
        required.push("video_url");
      } else {
        Object.assign(properties, {
          image_url: url("Image to upscale."),
          width: size(
            "Width of the source image in pixels (read from the file when image_url is a file id).",
          ),
          height: size(
            "Height of the source image in pixels (read from the file when image_url is a file id).",
          ),
        });
        required.push("image_url");
      }
      properties.scale = {
        type: "integer",
        minimum: 2,
        maximum: 4,
        default: 2,
        description: "Upscale factor.",
      };
      break;
    case "audio":
      Object.assign(properties, {
        text: { type: "string", minLength: 1, maxLength: 20000, description: "Text to speak." },
        voice: { type: "string", maxLength: 64 },
        duration,
      });
      required.push("text");
      break;
    case "text":
      // Text models are called through /chat/completions; this documents their billing inputs for /estimate.
      Object.assign(properties, {
        input_tokens: { type: "integer", minimum: 0 },
        output_tokens: { type: "integer", minimum: 0 },
      });
      break;
  }
  if (m.resolutions) properties.resolution = { type: "string", enum: m.resolutions };
  if (m.sandbox) {
    properties.sandbox = SANDBOX_CONTROLS;
    // What the sandbox's encoders make (PNG images, WAV audio), declared as real models declare
    // theirs: fal's clients and OpenAI's doors check output_format against it. An edit's mask
    // needs a field to go to (the sandbox takes it and draws nothing from it).
    const formats = SANDBOX_OUTPUT_FORMATS[m.kind];
    if (formats) properties.output_format = formats;
    if (m.kind === "image") properties.mask_url = url("Optional edit mask (image edits).");
  }
  return { type: "object", additionalProperties: false, properties, required };
}
