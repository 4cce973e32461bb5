import { createHmac, timingSafeEqual } from "node:crypto";

/** Signed output links are valid for at most 24 hours (SPEC: Limits). */
export const LINK_TTL_SECONDS = 24 * 3600;

/**
 * Output URL signatures: base64url HMAC-SHA256 over "<request id>.<index>.<exp>", keyed with a
 * key derived from the server secret. Every part of the link is covered, so editing the id,
 * the index or the expiry breaks it.
 */
export class LinkSigner {
  private keys: Buffer[] = [];
  private secrets: string[] = [];

  /** The first secret signs; all of them verify (the previous one stays valid after a rotation). */
  constructor(secrets: string[]) {
    this.setSecrets(secrets);
  }

  /** Swaps the secrets in place (after `gengate secret rotate` and a reload). */
  setSecrets(secrets: string[]): void {
    if (secrets.length === 0) throw new Error("LinkSigner needs at least one secret");
    this.secrets = [...secrets];
    this.keys = secrets.map((s) => createHmac("sha256", s).update("gengate output links v1").digest());
  }

  /**
   * A MAC of `text` for another use than links (an upstream's webhook token, `purpose` naming it):
   * keyed with its own key derived from the same secrets, so a link signature never stands for a
   * token nor the reverse, and `gengate secret rotate` covers both (the previous secret verifies).
   */
  signFor(purpose: string, text: string): string {
    return purposeMac(this.secrets[0]!, purpose, text);
  }

  verifyFor(purpose: string, text: string, sig: string): boolean {
    const given = Buffer.from(sig, "base64url");
    if (given.length !== 32) return false;
    let ok = false;
    for (const secret of this.secrets) {
      ok = timingSafeEqual(Buffer.from(purposeMac(secret, purpose, text), "base64url"), given) || ok;
    }
    return ok;
  }

  sign(requestId: string, index: number, exp: number): string {
    return mac(this.keys[0]!, requestId, index, exp);
  }

  verify(requestId: string, index: number, exp: number, sig: string): boolean {
    const given = Buffer.from(sig, "base64url");
    if (given.length !== 32) return false;
    let ok = false;
    for (const key of this.keys) {
      const expected = Buffer.from(mac(key, requestId, index, exp), "base64url");
      ok = timingSafeEqual(expected, given) || ok;
    }
    return ok;
  }
}

function purposeMac(secret: string, purpose: string, text: string): string {
  const key = createHmac("sha256", secret).update(`gengate ${purpose} v1`).digest();
  return createHmac("sha256", key).update(text).digest("base64url");
}

function mac(key: Buffer, requestId: string, index: number, exp: number): string {
  return createHmac("sha256", key).update(`${requestId}.${index}.${exp}`).digest("base64url");
}

/**
 * Checks a signed upload link's `exp` and `sig` (an uploaded file is signed as index 0): "forbidden"
 * for a malformed expiry, a missing or wrong signature or an expiry further ahead than any link we
 * issue (plus a minute of clock skew), "expired" past its expiry. The one check of such links, for
 * downloads and for model inputs read back from the store.
 */
export function checkUploadLink(
  signer: LinkSigner,
  fileId: string,
  expText: string | undefined,
  sig: string | undefined,
  nowSeconds = Math.floor(Date.now() / 1000),
): "ok" | "forbidden" | "expired" {
  const exp = Number(expText);
  if (
    !/^\d{1,12}$/.test(expText ?? "") ||
    !sig ||
    exp > nowSeconds + LINK_TTL_SECONDS + 60 ||
    !signer.verify(fileId, 0, exp, sig)
  ) {
    return "forbidden";
  }
  return exp < nowSeconds ? "expired" : "ok";
}
