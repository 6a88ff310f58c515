/** A file of a generative UI bundle (`entrypoint.js`, `entrypoint.css`). */
export interface UiFile {
  readonly basename: string;
  readonly contents: Uint8Array;
}

/**
 * The generative UI components of langgraph.json's `ui`, built once at the API's start
 * (src/langgraph/ui-bundles.ts): the files of each name, served at `/ui/{name}/{basename}`.
 */
export interface UiBundles {
  files(name: string): readonly UiFile[] | undefined;
}
