<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/subsilver/posting_body.tpl (trimmed: no editor toolbar, icons, attachments or calendar) -->
<form action="{S_POST_ACTION}" method="post" name="post" enctype="multipart/form-data">
{ERROR_BOX}
<table class="forumline" width="100%" border="0" cellspacing="1" cellpadding="3">
	<tr><th class="thHead" colspan="2" height="25"><b>{PAGE_TITLE}</b></th></tr>
	<!-- BEGIN switch_subject -->
	<tr>
		<td class="row1" width="22%"><span class="gen"><b>Asunto</b></span></td>
		<td class="row2" width="78%"><input class="post" style="width:450px" type="text" name="subject" value="{SUBJECT}" size="45" maxlength="150" tabindex="2" /></td>
	</tr>
	<!-- END switch_subject -->
	<tr>
		<td class="row1" valign="top"><span class="gen"><b>Mensaje</b></span></td>
		<td class="row2" valign="top"><textarea id="text_editor_textarea" class="post" name="message" tabindex="3" wrap="virtual">{MESSAGE}</textarea>&nbsp;</td>
	</tr>
	<tr>
		<td class="catBottom" colspan="2" align="center" height="28">
				<input type="hidden" name="lt" value="0" />
				{S_HIDDEN_FORM_FIELDS}
				<input class="liteoption" type="submit" name="preview" value="{L_PREVIEW}" tabindex="5" />
				&nbsp;<input class="mainoption" type="submit" name="post" value="{L_SUBMIT}" tabindex="6" accesskey="s" />
		</td>
	</tr>
</table>
</form>
