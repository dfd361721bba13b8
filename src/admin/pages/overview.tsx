/** @jsxImportSource hono/jsx */
export interface ModelCount {
  model: string
  count: number | undefined
}

/** How many records each model holds, read through the public list endpoint. */
/** `pages`: the console page of each model that has one. */
export function Overview({ counts, apiBaseUrl, pages }: { counts: ModelCount[]; apiBaseUrl: string; pages: ReadonlyMap<string, { path: string; title: string }> }) {
  return (
    <section>
      <h1>Overview</h1>
      <p>
        Scripts reach the same data through the REST API: <a href={`${apiBaseUrl}/api/docs`}>{`${apiBaseUrl}/api/docs`}</a>
      </p>
      <table class="counts">
        <thead>
          <tr>
            <th scope="col">Model (its API)</th>
            <th scope="col">Records</th>
            <th scope="col">Console page</th>
          </tr>
        </thead>
        <tbody>
          {counts.map(({ model, count }) => (
            <tr>
              <td>
                <a href={`${apiBaseUrl}/api/v1/${model}`}>{model}</a>
              </td>
              <td>{count ?? '—'}</td>
              <td>{pages.has(model) ? <a href={pages.get(model)!.path}>{pages.get(model)!.title}</a> : null}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}
