/**
 * The model kinds of the API (docs/api.md). Below both the catalog and the providers: a provider's
 * descriptor names the kinds it serves, and the catalog checks models against them, so the list
 * cannot live in either without a folder cycle (catalog -> providers -> catalog).
 */
export const KINDS = ["video", "image", "avatar", "upscale", "audio", "text"] as const;
export type Kind = (typeof KINDS)[number];
