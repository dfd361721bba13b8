/** @jsxImportSource hono/jsx */
export interface ModelCount {
  model: string
  count: number | undefined
}

/** How many records each model holds, read through the public list endpoint. */
export function Overview({ counts, apiBaseUrl }: { counts: ModelCount[]; apiBaseUrl: string }) {
  return (
    <section>
      <h1>Overview</h1>
      <p>
        Scripts reach the same data through the REST API: <a href={`${apiBaseUrl}/api/docs`}>{`${apiBaseUrl}/api/docs`}</a>
      </p>
      <table class="counts">
        <thead>
          <tr>
            <th>Model</th>
            <th>Records</th>
          </tr>
        </thead>
        <tbody>
          {counts.map(({ model, count }) => (
            <tr>
              <td>
                <a href={`${apiBaseUrl}/api/v1/${model}`}>{model}</a>
              </td>
              <td>{count ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}
