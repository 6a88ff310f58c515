import type * as TS from 'typescript';

/*
 * JSON schemas of a graph's state, input, output and context read from its TypeScript types,
 * for graphs whose state is an `Annotation` (its types exist in the source only), as the
 * LangGraph server reads them. Our own reading of the compiler's types: a compiled graph's
 * `builder` (a StateGraph whose second type argument is the state), its `~InputType` and
 * `~OutputType`, and the `context` its `invoke` options take. Subgraphs are the compiled graphs
 * given to `addNode(name, …)` in the project's own files, by node name.
 *
 * Runs in a child process (src/langgraph/type-schemas.ts): building a program takes seconds.
 * What it describes is bounded ({@link MAX_SCHEMA_NODES}): a few lines of mapped types can name
 * more paths than memory holds, each a type the compiler builds when it is asked for.
 */

export type JsonSchema = Record<string, unknown>;

/** The `typescript` module, as `require('typescript')` answers it. */
export type TypeScript = typeof import('typescript');

/** One graph's schemas, null where its types do not tell. */
export interface TypedSchemas {
  state: JsonSchema | null;
  input: JsonSchema | null;
  output: JsonSchema | null;
  config: JsonSchema | null;
}

/** The root graph's schemas, and each subgraph's by the name of the node that runs it (a name given twice with different types is left out). */
export interface TypedGraphSchemas {
  root: TypedSchemas | null;
  subgraphs: Record<string, TypedSchemas>;
}

const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
/** Nesting read before a value is described as anything (`{}`). */
const MAX_DEPTH = 8;
/** The values (schema nodes) one reading may describe, every graph of the program together; past it, {@link TooLargeError}. */
export const MAX_SCHEMA_NODES = 5_000;

/** The types describe more than {@link MAX_SCHEMA_NODES} values. */
export class TooLargeError extends Error {}

const COMPILER_OPTIONS = (ts: TypeScript): TS.CompilerOptions => ({
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  allowJs: true,
  checkJs: false,
  allowImportingTsExtensions: true,
  noEmit: true,
  strict: true,
  skipLibCheck: true,
  skipDefaultLibCheck: true,
  esModuleInterop: true,
  resolveJsonModule: true,
  jsx: ts.JsxEmit.ReactJSX,
  types: [],
});

/** The schemas of the graph exported as `exportName` from `file` (absolute), read with the TypeScript module `ts`. */
export function extractTypedSchemas(ts: TypeScript, file: string, exportName: string): TypedGraphSchemas {
  const program = ts.createProgram({ rootNames: [file], options: COMPILER_OPTIONS(ts) });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  if (!source) throw new Error(`TypeScript did not read ${file}`);
  const reader = new TypeReader(ts, checker);

  const moduleSymbol = checker.getSymbolAtLocation(source);
  const exported = moduleSymbol && checker.getExportsOfModule(moduleSymbol).find((s) => s.name === exportName);
  const root = exported ? reader.graphSchemas(reader.graphType(checker.getTypeOfSymbolAtLocation(exported, source))) : null;

  const found = new Map<string, { type: TS.Type; schemas: TypedSchemas } | null>();
  for (const file of program.getSourceFiles()) {
    if (file.isDeclarationFile || file.fileName.includes('/node_modules/')) continue;
    const visit = (node: TS.Node): void => {
      const named = addNodeCall(ts, node);
      if (named) {
        const type = reader.graphType(checker.getTypeAtLocation(named.value));
        const schemas = type && reader.graphSchemas(type);
        if (schemas) {
          const before = found.get(named.name);
          if (before === undefined) found.set(named.name, { type: type!, schemas });
          else if (before !== null && before.type !== type) found.set(named.name, null);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  const subgraphs: Record<string, TypedSchemas> = {};
  for (const [name, entry] of found) if (entry) subgraphs[name] = entry.schemas;
  return { root, subgraphs };
}

/** `….addNode("name", value)`: the node's name and its value's expression. */
function addNodeCall(ts: TypeScript, node: TS.Node): { name: string; value: TS.Expression } | undefined {
  if (!ts.isCallExpression(node) || node.arguments.length < 2) return undefined;
  const callee = node.expression;
  if (!ts.isPropertyAccessExpression(callee) || callee.name.text !== 'addNode') return undefined;
  const [name, value] = node.arguments;
  if (!name || !value || !ts.isStringLiteralLike(name)) return undefined;
  return { name: name.text, value };
}

class TypeReader {
  /** Values described so far. */
  private described = 0;

  constructor(
    private readonly ts: TypeScript,
    private readonly checker: TS.TypeChecker,
  ) {}

  private property(type: TS.Type, name: string): TS.Type | undefined {
    const symbol = this.checker.getPropertyOfType(type, name);
    return symbol ? this.checker.getTypeOfSymbol(symbol) : undefined;
  }

  /** A compiled graph's type from an export's: a factory's awaited answer, a promise's value, a StateGraph's `compile()`. */
  graphType(type: TS.Type): TS.Type | undefined {
    const calls = type.getCallSignatures();
    let graph = calls.length > 0 ? calls[0]!.getReturnType() : type;
    graph = this.checker.getAwaitedType(graph) ?? graph;
    if (!this.property(graph, 'builder') && !this.property(graph, '~OutputType')) {
      const compile = this.property(graph, 'compile')?.getCallSignatures()[0];
      if (!compile) return undefined;
      graph = compile.getReturnType();
    }
    return this.property(graph, 'builder') || this.property(graph, '~OutputType') ? graph : undefined;
  }

  graphSchemas(graph: TS.Type | undefined): TypedSchemas | null {
    if (!graph) return null;
    const builder = this.property(graph, 'builder');
    const builderArgs = builder && (builder.flags & this.ts.TypeFlags.Object) !== 0 ? this.checker.getTypeArguments(builder as TS.TypeReference) : [];
    const invoke = this.property(graph, 'invoke')?.getCallSignatures()[0];
    const options = invoke?.getParameters()[1];
    const optionsType = options && this.checker.getNonNullableType(this.checker.getTypeOfSymbol(options));
    const context = optionsType && this.property(optionsType, 'context');
    const schemas: TypedSchemas = {
      state: this.document(builderArgs[1]),
      input: this.document(this.property(graph, '~InputType')),
      output: this.document(this.property(graph, '~OutputType')),
      config: this.document(context && this.checker.getNonNullableType(context)),
    };
    return Object.values(schemas).some((s) => s !== null) ? schemas : null;
  }

  /** A top-level schema (draft-07, with the definitions it refers to); null for a type that describes no object. */
  private document(type: TS.Type | undefined): JsonSchema | null {
    if (!type || type.flags & (this.ts.TypeFlags.Any | this.ts.TypeFlags.Unknown | this.ts.TypeFlags.Never)) return null;
    const definitions: Record<string, JsonSchema> = {};
    const schema = this.describe(type, definitions, [], 0);
    if (!schema || schema.type !== 'object' || Object.keys(schema.properties as object).length === 0) return null;
    return { ...schema, ...(Object.keys(definitions).length > 0 ? { definitions } : {}), $schema: DRAFT_07 };
  }

  private describe(type: TS.Type, definitions: Record<string, JsonSchema>, seen: TS.Type[], depth: number): JsonSchema | undefined {
    const { ts, checker } = this;
    if (++this.described > MAX_SCHEMA_NODES) throw new TooLargeError(`its types describe more than ${MAX_SCHEMA_NODES} values`);
    const f = type.flags;
    if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return {};
    if (f & (ts.TypeFlags.Undefined | ts.TypeFlags.Void | ts.TypeFlags.Never | ts.TypeFlags.ESSymbolLike)) return undefined;
    if (f & ts.TypeFlags.Null) return { type: 'null' };
    if (f & ts.TypeFlags.BooleanLike) return f & ts.TypeFlags.BooleanLiteral && !(f & ts.TypeFlags.Union) ? { type: 'boolean', enum: [checker.typeToString(type) === 'true'] } : { type: 'boolean' };
    if (f & ts.TypeFlags.StringLiteral) return { type: 'string', enum: [(type as TS.StringLiteralType).value] };
    if (f & ts.TypeFlags.NumberLiteral) return { type: 'number', enum: [(type as TS.NumberLiteralType).value] };
    if (f & (ts.TypeFlags.StringLike | ts.TypeFlags.TemplateLiteral)) return { type: 'string' };
    if (f & ts.TypeFlags.NumberLike) return { type: 'number' };
    if (f & ts.TypeFlags.BigIntLike) return { type: 'integer' };
    if (type.isUnion()) return this.union(type, definitions, seen, depth);
    if (depth >= MAX_DEPTH || seen.includes(type)) return {};
    const inner = [...seen, type];
    if (checker.isArrayType(type) || checker.isTupleType(type)) {
      const items = checker.getTypeArguments(type as TS.TypeReference);
      if (checker.isTupleType(type)) return { type: 'array', items: items.map((t) => this.describe(t, definitions, inner, depth + 1) ?? {}) };
      return { type: 'array', items: this.describe(items[0]!, definitions, inner, depth + 1) ?? {} };
    }
    if (f & ts.TypeFlags.NonPrimitive) return { type: 'object' };
    if (!(f & (ts.TypeFlags.Object | ts.TypeFlags.Intersection))) return {};
    if (type.getCallSignatures().length > 0 || type.getConstructSignatures().length > 0) return undefined;
    const symbol = type.getSymbol();
    if (symbol?.name === 'Date') return { type: 'string', format: 'date-time' };
    if (symbol && symbol.flags & ts.SymbolFlags.Class) {
      // A class instance (a BaseMessage): an object, defined once and referred to.
      const name = checker.typeToString(type, undefined, ts.TypeFormatFlags.NoTruncation).replace(/ /g, '');
      definitions[name] ??= { type: 'object' };
      return { $ref: `#/definitions/${name}` };
    }
    return this.object(type, definitions, inner, depth);
  }

  private object(type: TS.Type, definitions: Record<string, JsonSchema>, seen: TS.Type[], depth: number): JsonSchema {
    const { ts, checker } = this;
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const property of checker.getPropertiesOfType(type)) {
      if (property.name.startsWith('__@') || property.flags & ts.SymbolFlags.Method) continue;
      const propertyType = checker.getTypeOfSymbol(property);
      const schema = this.describe(propertyType, definitions, seen, depth + 1);
      if (!schema) continue;
      properties[property.name] = schema;
      const optional = property.flags & ts.SymbolFlags.Optional || (propertyType.isUnion() && propertyType.types.some((t) => t.flags & ts.TypeFlags.Undefined));
      if (!optional) required.push(property.name);
    }
    const schema: JsonSchema = { type: 'object', properties };
    if (required.length > 0) schema.required = required;
    const index = checker.getIndexInfosOfType(type).find((info) => info.keyType.flags & ts.TypeFlags.String);
    if (index) schema.additionalProperties = this.describe(index.type, definitions, seen, depth + 1) ?? {};
    return schema;
  }

  private union(type: TS.UnionType, definitions: Record<string, JsonSchema>, seen: TS.Type[], depth: number): JsonSchema | undefined {
    const { ts } = this;
    const members = type.types.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)));
    if (members.length === 0) return undefined;
    const booleans = members.filter((t) => t.flags & ts.TypeFlags.BooleanLiteral);
    const rest = members.filter((t) => !(t.flags & ts.TypeFlags.BooleanLiteral));
    const parts = rest.map((t) => this.describe(t, definitions, seen, depth)).filter((s): s is JsonSchema => s !== undefined);
    if (booleans.length === 2) parts.push({ type: 'boolean' });
    else if (booleans.length === 1) parts.push(this.describe(booleans[0]!, definitions, seen, depth)!);
    // Literals of one type are one enum, in a stable order.
    const literalType = parts[0]?.type;
    if (parts.length > 1 && typeof literalType === 'string' && parts.every((p) => p.type === literalType && Array.isArray(p.enum) && Object.keys(p).length === 2)) {
      const values = parts.flatMap((p) => p.enum as unknown[]);
      return { type: literalType, enum: [...new Set(values)].sort((a, b) => String(a).localeCompare(String(b))) };
    }
    if (parts.length === 1) return parts[0];
    if (parts.some((p) => Object.keys(p).length === 0)) return {};
    if (parts.every((p) => typeof p.type === 'string' && Object.keys(p).length === 1)) return { type: [...new Set(parts.map((p) => p.type))] };
    return { anyOf: parts };
  }
}
