import { t } from "elysia";

const Unix = t.Integer({ description: "Unix seconds." });
const UnixOrNull = t.Union([Unix, t.Null()]);

/** OpenAI's video object (node_modules/openai/resources/videos.js, `Video`). */
export const VideoSchema = t.Object(
  {
    id: t.String({ description: "The request id (UUIDv7): the same job is GET /v1/requests/{id}." }),
    object: t.Literal("video"),
    status: t.Union(
      [t.Literal("queued"), t.Literal("in_progress"), t.Literal("completed"), t.Literal("failed")],
      {
        description:
          "IN_QUEUE, IN_PROGRESS, COMPLETED; FAILED and CANCELLED read as failed (error.code says which).",
      },
    ),
    progress: t.Integer({ minimum: 0, maximum: 100, description: "0 queued, 50 in progress, 100 ended." }),
    model: t.String(),
    prompt: t.Union([t.String(), t.Null()]),
    seconds: t.String({ description: "The billed duration in seconds, as a string." }),
    size: t.Union([t.String(), t.Null()], { description: '"WxH"; null for a model that takes no size.' }),
    created_at: Unix,
    completed_at: UnixOrNull,
    expires_at: UnixOrNull,
    error: t.Union([t.Object({ code: t.String(), message: t.String() }), t.Null()]),
    remixed_from_video_id: t.Null(),
  },
  { title: "Video" },
);

export const VideoListSchema = t.Object(
  {
    object: t.Literal("list"),
    data: t.Array(VideoSchema),
    first_id: t.Union([t.String(), t.Null()]),
    last_id: t.Union([t.String(), t.Null()]),
    has_more: t.Boolean(),
  },
  { title: "VideoList" },
);

export const VideoDeletedSchema = t.Object(
  { id: t.String(), object: t.Literal("video.deleted"), deleted: t.Literal(true) },
  { title: "VideoDeleted" },
);

export const VideoIdParams = t.Object({ id: t.String({ description: "The video id (a request id)." }) });

export const VideoListQuery = t.Object({
  after: t.Optional(t.String({ description: "The last id of the previous page." })),
  limit: t.Optional(t.String({ description: "1 to 100 (default 20).", examples: ["20"] })),
  order: t.Optional(t.String({ description: "desc (newest first, the default) or asc." })),
});

export const VideoContentQuery = t.Object({
  variant: t.Optional(
    t.String({ description: "video (the default); thumbnail and spritesheet are not stored (404)." }),
  ),
});
