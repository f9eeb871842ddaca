import { describe, it, expect } from "vitest";
import { isObjectLike, isRecord } from "../../core/util/guards";
import { isJsonObject, parseLossless, PyFloat } from "../../core/log/pyjson";
import { getAt, setAt } from "../../core/util/json-path";
import { parseSse } from "../../core/util/sse";
import { sseData } from "../../core/capture/gateway-forward";

describe("type guards", () => {
  it("tell a record from any object, and a lossless JSON object from a PyFloat", () => {
    for (const x of [null, undefined, 0, "", "x", true]) {
      expect(isRecord(x)).toBe(false);
      expect(isObjectLike(x)).toBe(false);
    }
    expect([isRecord([]), isObjectLike([])]).toEqual([false, true]);
    expect([isRecord({}), isObjectLike({})]).toEqual([true, true]);
    const doc = parseLossless('{"a": 1.0, "b": {"c": 2}}') as Record<string, unknown>;
    expect(doc.a).toBeInstanceOf(PyFloat);
    expect([isRecord(doc.a), isJsonObject(doc.a), isJsonObject(doc.b), isJsonObject([])]).toEqual([true, false, true, false]);
  });
});

describe("getAt / setAt", () => {
  it("read and write at a path, and refuse a path that does not fit", () => {
    const v = { messages: [{ content: "a" }, { content: [{ text: "b" }] }] };
    expect(getAt(v, ["messages", 1, "content", 0, "text"])).toBe("b");
    expect(getAt(v, ["messages", 5, "content"])).toBeUndefined();
    expect(getAt(v, ["messages", 0, "content", "length"])).toBeUndefined();
    expect(setAt(v, ["messages", 0, "content"], "z")).toBe(true);
    expect(v.messages[0].content).toBe("z");
    expect(setAt(v, ["messages", 2], {})).toBe(false); // outside the array
    expect(setAt(v, ["messages", "0"], {})).toBe(false); // a string key of an array
    expect(setAt(v, ["messages", 0, 1], "x")).toBe(false); // a number key of an object
    expect(setAt(v, ["nope", "x"], 1)).toBe(false); // no parent
    expect(setAt(v, [], 1)).toBe(false);
  });
});

describe("parseSse", () => {
  const stream = [": keep-alive", "", 'data: {"a": 1}', "", 'event: x\r\ndata: {"b":\r\ndata:  2}', "", "data: not json", "", "data: [DONE]", ""].join("\n");

  it("drops what is not JSON when asked, as the gateway's reader does", () => {
    expect(parseSse(stream, { skipBad: true })).toEqual([{ a: 1 }, { b: 2 }]);
    expect(parseSse(stream, { skipBad: true })).toEqual(sseData(stream));
  });

  it("throws on data that is not JSON otherwise", () => {
    expect(() => parseSse(stream)).toThrow(SyntaxError);
    expect(parseSse('data: {"a": 1}\n\ndata: [DONE]\n\n')).toEqual([{ a: 1 }]);
  });
});
