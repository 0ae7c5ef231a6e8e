// The API reference (/api/docs): Swagger UI over the service's OpenAPI document. Every file and
// every call stays on this origin: the document's address is on the page, the public validator's
// badge is off, and no query parameter may point the page at another document.
(function () {
  "use strict";
  const mount = document.getElementById("swagger-ui");
  if (!mount || typeof window.SwaggerUIBundle !== "function") return;
  window.SwaggerUIBundle({
    url: mount.dataset.document,
    domNode: mount,
    deepLinking: true,
    validatorUrl: null,
    queryConfigEnabled: false,
    displayOperationId: true,
    displayRequestDuration: true,
    defaultModelsExpandDepth: 0,
    showCommonExtensions: true,
  });
})();
