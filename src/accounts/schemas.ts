import { t } from "elysia";
import { MicroString } from "../http/schemas.ts";

export const AccountSchema = t.Object(
  {
    id: t.String(),
    name: t.String(),
    currency: t.Union([t.Literal("USD"), t.Literal("RUB")]),
    balance_micro: MicroString("Balance in micro-units of the account currency."),
    held_micro: MicroString("Amount reserved by open jobs."),
    available_micro: MicroString("balance - held: what new jobs can reserve."),
    created_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  },
  { title: "Account" },
);
