<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/modernbb/posting_body.tpl (trimmed: no editor toolbar, icons, attachments or calendar) -->
<form action="{S_POST_ACTION}" method="post" name="post" enctype="multipart/form-data">
{ERROR_BOX}
<div class="panel" id="postingbox"><div class="inner"><span class="corners-top"><span></span></span>
	<h3>{PAGE_TITLE}</h3>
	<fieldset class="fields1">
		<!-- BEGIN switch_subject -->
		<dl style="clear: left;">
			<dt><label>Asunto:</label></dt>
			<dd><input class="inputbox medium" type="text" name="subject" value="{SUBJECT}" maxlength="150" tabindex="2" /></dd>
		</dl>
		<!-- END switch_subject -->
		<div id="message-box"><textarea id="text_editor_textarea" name="message" tabindex="3">{MESSAGE}</textarea></div>
	</fieldset>
	<fieldset class="submit-buttons">
		{S_HIDDEN_FORM_FIELDS}
		<input type="hidden" name="lt" value="0" />
		<input class="button2" type="submit" name="preview" value="{L_PREVIEW}" tabindex="5" />&nbsp;
		&nbsp;<input class="button1" type="submit" name="post" value="{L_SUBMIT}" tabindex="6" accesskey="s" />
	</fieldset>
<span class="corners-bottom"><span></span></span></div></div>
</form>
