/** The pricing engine: pure functions from a catalog Model and an input to integer micro-USD. */
export { amountFor, ceilDiv, formatQuantity, PIXELS_PER_MEGAPIXEL } from "./arith.ts";
export { billedSeconds, type DeliveredOutput, type Delivery, priceDelivery } from "./delivered.ts";
export { type Estimate, estimate } from "./estimate.ts";
export { MAX_RATE_MICRO, parseRate, RATE_SCALE, usdMicroToRubMicro } from "./fx.ts";
export { type MediaPricingOptions, priceMediaInput } from "./media.ts";
export { DEFAULT_UPSCALE, type ImageSize, type ImageSizeLookup } from "./megapixels.ts";
export type { MediaQuote, MediaUnit, Quote, TextQuote } from "./quote.ts";
export { chargeForActualQuantity, chargeForActualUnits, quantityOfUnits } from "./settle.ts";
export {
  chargeForTextUsage,
  DEFAULT_MAX_TOKENS,
  estimateTextInput,
  priceText,
  reserveText,
  type TokenParams,
} from "./text.ts";
