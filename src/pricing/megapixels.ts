import type { Model } from "../catalog/model.ts";
import { DomainError } from "../lib/errors.ts";
import { PIXELS_PER_MEGAPIXEL } from "./arith.ts";
import { type Input, readInteger } from "./read-input.ts";

/** Pixel dimensions of an image. */
export interface ImageSize {
  width: number;
  height: number;
}

/**
 * Reads the dimensions of an uploaded file referenced by a URL field (e.g. a "file_..." id).
 * Supplied by the caller, so pricing stays free of I/O; returns null when the value is not a
 * file it knows (a plain https URL) or the file is not an image it can measure.
 */
export type ImageSizeLookup = (fieldValue: string) => ImageSize | null | undefined;

/** Default upscale factor, as in the default input schema. */
export const DEFAULT_UPSCALE = 2;

const dimension = (value: unknown, param: string) =>
  readInteger(value, param, { min: 1, max: null, noun: "pixels" });

/**
 * Billable pixels of a per-megapixel request (the quote's quantity).
 * - image models: width x height x num_images of the requested output; width and height are
 *   required because the price depends on them (missing -> unpriceable); num_images defaults
 *   to 1 (per-MP models have no default_units).
 * - upscale models: the output, (width x scale) x (height x scale), scale defaulting to 2.
 * The total is checked against max megapixels in integers: pixels <= max x 1,000,000.
 */
export function billablePixels(model: Model, input: Input, imageSize?: ImageSizeLookup): bigint {
  const maxPixels = BigInt(model.max!) * PIXELS_PER_MEGAPIXEL;
  let pixels: bigint;
  let what: string;
  if (model.kind === "upscale") {
    const scale =
      input.scale === undefined
        ? BigInt(DEFAULT_UPSCALE)
        : readInteger(input.scale, "scale", { min: 1, max: null, noun: "times" });
    const source = sourceSize(input, imageSize);
    pixels = source.width * scale * (source.height * scale);
    what = `the output image, (${source.width} x ${scale}) x (${source.height} x ${scale}) pixels,`;
  } else {
    const width = requiredDimension(input, "width");
    const height = requiredDimension(input, "height");
    const count =
      input.num_images === undefined
        ? 1n
        : readInteger(input.num_images, "num_images", { min: 1, max: null, noun: "images" });
    pixels = width * height * count;
    what = `${width} x ${height} pixels x ${count} image(s)`;
  }
  if (pixels > maxPixels) {
    throw new DomainError(
      "validation_error",
      `This request is ${what} = ${pixels} pixels, above the maximum of ${model.max} megapixels ` +
        `(${maxPixels} pixels) for ${model.id}.`,
    );
  }
  return pixels;
}

function requiredDimension(input: Input, param: "width" | "height"): bigint {
  if (input[param] === undefined) {
    throw new DomainError("unpriceable", `${param} is required to price a per-megapixel model.`, { param });
  }
  return dimension(input[param], param);
}

/**
 * Source dimensions of an upscale. Decision: when the caller can measure the referenced file
 * (imageSize returns a size), that measurement wins over any width/height in the input: it is
 * what the upscaler will actually receive, and a client must not lower its price by
 * understating the size. Otherwise the input's width and height are used (a plain URL the
 * gateway cannot measure before running). Neither -> unpriceable.
 */
function sourceSize(input: Input, imageSize?: ImageSizeLookup): { width: bigint; height: bigint } {
  // Declared dimensions are validated even when a measurement overrides them: a wrong type is an error.
  const declaredWidth = input.width === undefined ? undefined : dimension(input.width, "width");
  const declaredHeight = input.height === undefined ? undefined : dimension(input.height, "height");
  if (imageSize && typeof input.image_url === "string") {
    const measured = imageSize(input.image_url);
    if (measured) {
      const ok = (n: number) => Number.isSafeInteger(n) && n >= 1;
      if (!ok(measured.width) || !ok(measured.height)) {
        throw new DomainError("unpriceable", "The dimensions of image_url could not be read.", {
          param: "image_url",
        });
      }
      return { width: BigInt(measured.width), height: BigInt(measured.height) };
    }
  }
  if (declaredWidth === undefined || declaredHeight === undefined) {
    const param = declaredWidth === undefined ? "width" : "height";
    throw new DomainError(
      "unpriceable",
      "The source image size is unknown: send width and height, or an uploaded file id in image_url.",
      { param },
    );
  }
  return { width: declaredWidth, height: declaredHeight };
}
