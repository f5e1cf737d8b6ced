// The interactive API reference of /docs: Swagger UI (shipped in static/vendor/swagger-ui) over the
// service's own OpenAPI document. "Try it out" runs in this page, so it carries the page's login: the
// session cookie goes with every same-origin request, and a write also needs the session's CSRF token,
// which webui/auth.py checks in the X-CSRF-Token header, as the other pages' scripts send it.
//
// A field a request body may leave out starts empty, and is sent only when filled: Swagger UI would preset a
// choice's first value (the game of POST /api/jobs, recognised from the file when left out) and a text's
// sample ("string": a notify_url the service refuses), and send them.
const unpresetOptional = (system) => ({
  wrapComponents: {
    JsonSchemaForm: (Original) => (props) => system.React.createElement(Original,
      props.dispatchInitialValue && !props.required ? { ...props, dispatchInitialValue: false } : props),
  },
});

(() => {
  const node = document.getElementById("swagger-ui");
  const token = document.querySelector('meta[name="csrf-token"]')?.content;
  const safe = new Set(["GET", "HEAD", "OPTIONS"]);
  node.textContent = "";
  window.SwaggerUIBundle({
    url: node.dataset.spec,
    domNode: node,
    // A deep link is an anchor inside each operation's button: a control nested in a control (axe).
    deepLinking: false,
    docExpansion: "list",
    defaultModelsExpandDepth: 0,
    // Swagger UI would otherwise send the document to validator.swagger.io for its badge.
    validatorUrl: null,
    plugins: [unpresetOptional],
    requestInterceptor: (request) => {
      if (token && !safe.has((request.method || "GET").toUpperCase())) {
        request.headers["X-CSRF-Token"] = token;
      }
      request.credentials = "same-origin";
      return request;
    },
  });
})();
