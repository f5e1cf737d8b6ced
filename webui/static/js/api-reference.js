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

// An operation opened is resolved (its references followed) over the document given, and Swagger UI gives the
// whole of it: for OpenAPI 3.1 its resolver (ApiDOM) reads every part again at each opening, the other
// operations' two thirds of it too, about a second of CPU an operation on a test machine. Given its own path
// and all the rest but the other paths (a reference points into the components), it reads a third as much:
// opening all 31 took Chromium 9.4 CPU-seconds against 25.6 (tests/browser/test_api_reference.py, this
// machine, one run each). Written against Swagger UI 5.36.0 (static/vendor/swagger-ui/VERSION), whose
// fn.resolveSubtree(spec, path, options) is not among its documented plugin hooks: tests/test_seams.py
// fails on a bundle that resolves what is opened otherwise.
const resolveTheOpenedPathAlone = (system) => {
  const resolve = system.fn.resolveSubtree;
  return {
    fn: {
      resolveSubtree: (spec, path, options) => {
        const item = path[0] === "paths" ? spec?.paths?.[path[1]] : undefined;
        return resolve(item ? { ...spec, paths: { [path[1]]: item } } : spec, path, options);
      },
    },
  };
};

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
    plugins: [unpresetOptional, resolveTheOpenedPathAlone],
    requestInterceptor: (request) => {
      if (token && !safe.has((request.method || "GET").toUpperCase())) {
        request.headers["X-CSRF-Token"] = token;
      }
      request.credentials = "same-origin";
      return request;
    },
  });
})();
