import FormModel
