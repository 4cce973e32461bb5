export { type ComfyProviderOptions, createComfyProvider, MAX_IMAGE_INPUT_BYTES } from "./provider.ts";
export { fillTemplate, isImageField, placeholders } from "./template.ts";
export { type ComfyModelEntry, validateComfyModels } from "./validate.ts";
