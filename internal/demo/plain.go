package demo

import "github.com/mcpkit/mcpkit/mcp"

// PlainInstructions are the instructions of the demo without the conformance fixtures.
const PlainInstructions = "A demo of mcpkit. Try echo, dice_roll, evaluate or countdown, take a note, read demo://about, or get the code_review prompt."

// The conformance suite's fixtures (shared/conformance/FIXTURES.md): the names and URIs it calls,
// which `mcpkit serve` registers only with --fixtures.
var (
	fixtureTools = []string{
		"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_multiple_content_types", "test_tool_with_progress", "test_tool_with_logging",
		"test_error_handling", "test_missing_capability", "test_streaming_elicitation",
		"test_logging_tool", "test_x_mcp_header", "json_schema_2020_12_tool",
		"test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults",
		"test_elicitation_sep1330_enums", "test_reconnection",
		"test_input_required_result_elicitation", "test_input_required_result_sampling",
		"test_input_required_result_list_roots", "test_input_required_result_request_state",
		"test_input_required_result_multiple_inputs", "test_input_required_result_multi_round",
		"test_input_required_result_tampered_state", "test_input_required_result_capabilities",
		"test_trigger_tool_change", "test_trigger_prompt_change", "test_trigger_resource_update",
		"test_tool_with_task", "greet", "slow_compute", "failing_job", "protocol_error_job",
		"confirm_delete", "multi_input",
	}
	fixturePrompts = []string{
		"test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource",
		"test_prompt_with_image", "test_input_required_result_prompt",
	}
	fixtureResources = []string{
		"test://static-text", "test://static-binary", "test://watched-resource", "test://template/{id}/data",
	}
)

// NewPlain returns the demo server without the conformance fixtures: a dozen tools a person
// would try, two resources and a prompt. opts may be nil.
func NewPlain(opts *mcp.ServerOptions) *mcp.Server {
	o := mcp.ServerOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Instructions == "" {
		o.Instructions = PlainInstructions
	}
	s := New(&o)
	s.RemoveTools(fixtureTools...)
	s.RemovePrompts(fixturePrompts...)
	s.RemoveResources(fixtureResources...)
	return s
}
