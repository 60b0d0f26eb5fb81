import type { ApiErrorBody } from "./api-types.js";

const credentialKey = "charter.viewer.credential";

/** An answer of the API that is not a success: its status and the error's stable code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The credential the person signed in with (an API key or a JWT), kept in this tab's session storage only:
 * closing the tab forgets it, and no other tab or site can read it.
 */
export const credentials = {
  get(): string | null {
    return sessionStorage.getItem(credentialKey);
  },
  set(credential: string): void {
    sessionStorage.setItem(credentialKey, credential);
  },
  clear(): void {
    sessionStorage.removeItem(credentialKey);
  },
};

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const credential = credentials.get();
  return { ...(credential !== null ? { authorization: `Bearer ${credential}` } : {}), ...extra };
}

async function failure(response: Response): Promise<ApiError> {
  let code = "HTTP_ERROR";
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = (await response.json()) as Partial<ApiErrorBody>;
    if (body.error !== undefined) {
      code = body.error.code;
      message = body.error.message;
    }
  } catch {
    // Not the API's error shape (a proxy's page, say): the status line says what there is to say.
  }
  return new ApiError(response.status, code, message);
}

/** GET a JSON answer of the API with the signed-in credential. */
export async function getJson<Answer>(path: string, signal?: AbortSignal): Promise<Answer> {
  const response = await fetch(path, { headers: headers(), ...(signal !== undefined ? { signal } : {}) });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as Answer;
}

/** POST a JSON body to the API with the signed-in credential. */
export async function postJson<Answer>(path: string, body: unknown): Promise<Answer> {
  const response = await fetch(path, {
    method: "POST",
    headers: headers({ "content-type": "application/json" }),
    body: JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as Answer;
}

/** The raw response of a GET with the signed-in credential (the event stream reads its body). */
export function getRaw(
  path: string,
  extraHeaders: Record<string, string>,
  signal: AbortSignal,
): Promise<Response> {
  return fetch(path, { headers: headers(extraHeaders), signal });
}
