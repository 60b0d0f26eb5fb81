export type RestToolMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD";

/**
 * One REST tool as `createRestToolSource` takes it; the configuration's `restTools.<name>` (after loading)
 * has this shape. `${parameters.x}` placeholders (or `${parameters.x.y}` into an object parameter) are filled
 * per call from the model's validated arguments.
 */
export interface RestToolDefinition {
  readonly method: RestToolMethod;
  /** An absolute http(s) URL; each placeholder's value is URL-encoded. */
  readonly url: string;
  /** Header values may hold placeholders too (not encoded; a value with a line break is refused). */
  readonly headers?: Readonly<Record<string, string>>;
  /** JSON Schema of the parameters object. Default: an object with no properties. */
  readonly parametersSchema?: Readonly<Record<string, unknown>> | null;
  /**
   * The JSON body. A string value that is exactly one placeholder takes the parameter's JSON value (number,
   * object...); an absent parameter there drops the key. Placeholders inside longer strings are replaced by
   * text. Absent: no body.
   */
  readonly bodyTemplate?: unknown;
  /** What the model reads about the tool. Default: `<METHOD> <url>`. */
  readonly description?: string | null;
  /** A limit for the request (milliseconds), on top of the contract's `toolTimeout`. */
  readonly timeout?: number | null;
  /** The named tool queue its calls wait in. */
  readonly queue?: string | null;
}
