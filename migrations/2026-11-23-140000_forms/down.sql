DROP TABLE form_response_transitions;
DROP TABLE form_responses;
DROP TABLE forms;
