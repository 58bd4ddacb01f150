// Package mcpregistry is a client of the official MCP Registry
// (https://registry.modelcontextprotocol.io) and of registries that serve
// its API (mirrors, internal registries): it searches servers, reads one
// version of a server's server.json, and turns a package or remote of it
// into what a server block runs or reaches (Plan).
//
// The types are the subset of the registry's own (pkg/api/v0 and pkg/model
// of github.com/modelcontextprotocol/registry, API v0.1) that mcphost uses.
// They are defined here rather than imported: that module's go.mod brings
// its server's dependencies (a database driver, an HTTP framework), and
// the JSON shape, not the Go package, is what the API freezes (v0.1).
// Members this package does not know are ignored, so a newer registry
// still decodes.
package mcpregistry

// Status is a server version's lifecycle status in the registry.
type Status string

// The statuses of a server version.
const (
	StatusActive     Status = "active"
	StatusDeprecated Status = "deprecated"
	StatusDeleted    Status = "deleted"
)

// Transport types of packages and remotes.
const (
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
)

// Package registry types (Package.RegistryType).
const (
	RegistryNPM   = "npm"
	RegistryPyPI  = "pypi"
	RegistryOCI   = "oci"
	RegistryNuGet = "nuget"
	RegistryMCPB  = "mcpb"
	RegistryCargo = "cargo"
)

// ServerList is the answer of GET /v0.1/servers.
type ServerList struct {
	Servers  []ServerResponse `json:"servers"`
	Metadata ListMetadata     `json:"metadata"`
}

// ListMetadata is a list's pagination.
type ListMetadata struct {
	NextCursor string `json:"nextCursor,omitempty"`
	Count      int    `json:"count"`
}

// ServerResponse is one server version with the registry's metadata: an
// element of ServerList and the answer of GET
// /v0.1/servers/{serverName}/versions/{version}.
type ServerResponse struct {
	Server ServerJSON   `json:"server"`
	Meta   ResponseMeta `json:"_meta"`
}

// ResponseMeta is the registry's metadata of a server version.
type ResponseMeta struct {
	Official *Official `json:"io.modelcontextprotocol.registry/official,omitempty"`
}

// Official is the official registry's metadata of a server version.
type Official struct {
	Status      Status `json:"status"`
	PublishedAt string `json:"publishedAt,omitempty"`
	UpdatedAt   string `json:"updatedAt,omitempty"`
	IsLatest    bool   `json:"isLatest"`
}

// ServerJSON is a server's server.json: what its publisher declared.
type ServerJSON struct {
	Schema      string      `json:"$schema,omitempty"`
	Name        string      `json:"name"`
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description"`
	Version     string      `json:"version"`
	WebsiteURL  string      `json:"websiteUrl,omitempty"`
	Repository  *Repository `json:"repository,omitempty"`
	Packages    []Package   `json:"packages,omitempty"`
	Remotes     []Transport `json:"remotes,omitempty"`
}

// Repository is where a server's source is.
type Repository struct {
	URL       string `json:"url,omitempty"`
	Source    string `json:"source,omitempty"`
	Subfolder string `json:"subfolder,omitempty"`
}

// Package is a way to run the server locally: a package of an npm, PyPI,
// NuGet or OCI registry (or an MCPB bundle).
type Package struct {
	RegistryType         string          `json:"registryType"`
	RegistryBaseURL      string          `json:"registryBaseUrl,omitempty"`
	Identifier           string          `json:"identifier"`
	Version              string          `json:"version,omitempty"`
	FileSHA256           string          `json:"fileSha256,omitempty"`
	RuntimeHint          string          `json:"runtimeHint,omitempty"`
	Transport            Transport       `json:"transport"`
	RuntimeArguments     []Argument      `json:"runtimeArguments,omitempty"`
	PackageArguments     []Argument      `json:"packageArguments,omitempty"`
	EnvironmentVariables []KeyValueInput `json:"environmentVariables,omitempty"`
}

// Transport is a package's transport, or a remote: its type (stdio,
// streamable-http, sse), URL, headers and the URL's {variables}.
type Transport struct {
	Type      string           `json:"type"`
	URL       string           `json:"url,omitempty"`
	Headers   []KeyValueInput  `json:"headers,omitempty"`
	Variables map[string]Input `json:"variables,omitempty"`
}

// Input is a value the user may have to give: Value (with {variables}
// replaced) if set, else what the user gives, else Default.
type Input struct {
	Description string   `json:"description,omitempty"`
	IsRequired  bool     `json:"isRequired,omitempty"`
	Format      string   `json:"format,omitempty"`
	Value       string   `json:"value,omitempty"`
	IsSecret    bool     `json:"isSecret,omitempty"`
	Default     string   `json:"default,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Choices     []string `json:"choices,omitempty"`
	// Variables are the {NAME}s of Value.
	Variables map[string]Input `json:"variables,omitempty"`
}

// KeyValueInput is an environment variable or a header.
type KeyValueInput struct {
	Input
	Name string `json:"name"`
}

// Argument types.
const (
	ArgPositional = "positional"
	ArgNamed      = "named"
)

// Argument is a runtime or package argument: a positional one, or a named
// one (Name is the flag, "--port").
type Argument struct {
	Input
	Type       string `json:"type"`
	Name       string `json:"name,omitempty"`
	ValueHint  string `json:"valueHint,omitempty"`
	IsRepeated bool   `json:"isRepeated,omitempty"`
}
