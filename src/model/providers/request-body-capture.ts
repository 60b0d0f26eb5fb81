import { AsyncLocalStorage } from "node:async_hooks";
import type { LanguageModelV4, LanguageModelV4GenerateResult } from "@ai-sdk/provider";

/**
 * Hands the transcript the request body a provider package built as the object it serialised, for packages
 * whose `doGenerate` reports only the JSON text it sent (`@ai-sdk/openai-compatible` does). Parsing that
 * text back cost a full JSON parse of the whole conversation on every turn (tens of µs on a 20-turn
 * session, and garbage to collect), only to rebuild the object the package had a moment before.
 *
 * The package's `transformRequestBody` hook is given `record`, which keeps the body of the call under way
 * (found through the call's async context, so concurrent calls on one model never mix) and returns it
 * unchanged; `languageModel` puts that object in the result in place of the text. The transcript stores the
 * same canonical JSON either way: the text is `JSON.stringify` of this object, and canonical JSON, like
 * `JSON.stringify`, leaves out `undefined` members.
 */
export class RequestBodyCapture {
  readonly #calls = new AsyncLocalStorage<{ body: unknown }>();

  /** The `transformRequestBody` hook: records the body of the call under way and sends it unchanged. */
  readonly record = (body: Record<string, unknown>): Record<string, unknown> => {
    const call = this.#calls.getStore();
    if (call !== undefined) call.body = body;
    return body;
  };

  /** The model with `doGenerate` reporting the recorded body object; everything else is the model's own. */
  languageModel(model: LanguageModelV4): LanguageModelV4 {
    const calls = this.#calls;
    const doGenerate = async (
      options: Parameters<LanguageModelV4["doGenerate"]>[0],
    ): Promise<LanguageModelV4GenerateResult> => {
      const call: { body: unknown } = { body: undefined };
      const result = await calls.run(call, () => model.doGenerate(options));
      return call.body === undefined
        ? result
        : { ...result, request: { ...result.request, body: call.body } };
    };
    return {
      specificationVersion: model.specificationVersion,
      provider: model.provider,
      modelId: model.modelId,
      supportedUrls: model.supportedUrls,
      doGenerate,
      doStream: (options) => model.doStream(options),
    };
  }
}
