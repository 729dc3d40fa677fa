// The gateway's API as the page calls it: the tenant's key from session storage, errors as ApiError.
const KEY = "lethe.apiKey";

export const session = {
  get key() { return sessionStorage.getItem(KEY); },
  set(key) { sessionStorage.setItem(KEY, key); },
  clear() { sessionStorage.removeItem(KEY); },
};

export class ApiError extends Error {
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

export async function call(path) {
  let response;
  try {
    response = await fetch(path, { headers: { Authorization: `Bearer ${session.key}` }, cache: "no-store" });
  } catch (exc) {
    throw new ApiError(0, "network", `the gateway did not answer (${exc.message})`);
  }
  let body = null;
  try { body = await response.json(); } catch { body = null; }
  if (!response.ok) {
    const error = (body && body.error) || {};
    throw new ApiError(response.status, error.type || "error", error.message || response.statusText);
  }
  return body;
}

export const memoryPath = (id) => `/v1/memories/${encodeURIComponent(id)}`;
