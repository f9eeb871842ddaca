/**
 * The LlamaIndex.TS and Mastra agent-name hooks on classes of the frameworks' shapes (the real
 * packages are run in framework-programs.test.ts): a model call made while an agent works is
 * named by that agent, the innermost agent wins, and an unnamed agent names nothing.
 */
import { describe, expect, it } from "vitest";
import { patchLlamaIndex, patchMastra } from "../../../core/register/framework-agents";

function host() {
  const h = { agentHints: [] as (() => string | undefined)[] };
  const named = () => h.agentHints.map((f) => f()).find(Boolean);
  return { h, named };
}

describe("framework agent names", () => {
  it("names a LlamaIndex FunctionAgent's steps by its name, not the default 'Agent'", async () => {
    const { h, named } = host();
    class FunctionAgent {
      constructor(readonly name: string) {}
      async takeStep() {
        await Promise.resolve();
        return named();
      }
    }
    patchLlamaIndex(h, { FunctionAgent });
    patchLlamaIndex(h, { FunctionAgent }); // once only
    expect(h.agentHints).toHaveLength(1);
    expect(await new FunctionAgent("researcher").takeStep()).toBe("researcher");
    expect(await new FunctionAgent("Agent").takeStep()).toBeUndefined();
    expect(named()).toBeUndefined(); // outside a step
  });

  it("names a Mastra Agent's generate and stream by its name, the innermost agent winning", async () => {
    const { h, named } = host();
    class Agent {
      constructor(
        readonly name: string,
        private readonly inner?: Agent,
      ) {}
      async generate(): Promise<unknown> {
        return this.inner ? [named(), await this.inner.generate()] : named();
      }
      stream() {
        return named();
      }
    }
    patchMastra(h, { Agent });
    expect(await new Agent("supervisor", new Agent("executor")).generate()).toEqual(["supervisor", "executor"]);
    expect(new Agent("researcher").stream()).toBe("researcher");
    patchMastra(h, {}); // a module without the class changes nothing
    expect(named()).toBeUndefined();
  });
});
