// The types and the `Client` of this module are generated at build time from openapi.yaml (a link to
// Schema/openapi.yaml) by swift-openapi-generator's build plugin; nothing here is written by hand.
