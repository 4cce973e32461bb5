import { ADMIN_TOKEN } from "../helpers/context.ts";

/** Request init for the admin API (the in-process app's `request`). */
export const admin = (method: string, body?: unknown, token: string | null = ADMIN_TOKEN) => ({
  method,
  key: null,
  headers: {
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...(body ? { "content-type": "application/json" } : {}),
  },
  ...(body ? { body: JSON.stringify(body) } : {}),
});

export type Err = { error: { code: string; message: string; type: string; param?: string } };
export type Key = {
  id: string;
  name: string;
  can_manage: boolean;
  monthly_limit_micro: string | null;
  revoked_at: string | null;
  account_id?: string;
};
